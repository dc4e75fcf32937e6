// Command sdkconsumer is a nacos-sdk-go program as the SDK's own example
// writes one, for registry/nacos's interoperability test: it registers an
// instance the way kratos's contrib/registry/nacos does (RegisterInstance,
// ephemeral, weight 10, kind and version metadata), subscribes to the
// service, and prints each push's healthy, enabled instances as a JSON line
// on stdout. It runs until stdin closes.
//
// It is a process of its own, built without the race detector, because
// nacos-sdk-go v2.3.5 processes a subscription's first answer and the
// server's push of the same service concurrently, sorting in place the
// list a callback is reading: a consumer that reads its callback's
// instances is a data race in the SDK, which go test -race reports in the
// process that holds it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nacos-group/nacos-sdk-go/v2/clients"
	"github.com/nacos-group/nacos-sdk-go/v2/common/constant"
	"github.com/nacos-group/nacos-sdk-go/v2/model"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"
)

// Line is one line of output: Registered once the SDK's instance is
// registered, then Instances at each push.
type Line struct {
	Registered bool       `json:"registered,omitempty"`
	Instances  []Instance `json:"instances"`
}

// Instance is a healthy, enabled instance of a push.
type Instance struct {
	Port     uint64            `json:"port"`
	Metadata map[string]string `json:"metadata"`
}

func main() {
	host := flag.String("host", "127.0.0.1", "Nacos server host")
	port := flag.Uint64("port", 8848, "Nacos server HTTP port")
	service := flag.String("service", "", "service to register in and subscribe to")
	regPort := flag.Uint64("register-port", 0, "port of the instance to register")
	dir := flag.String("dir", "", "directory for the SDK's log and cache")
	flag.Parse()
	if err := run(*host, *port, *service, *regPort, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "sdkconsumer:", err)
		os.Exit(1)
	}
}

func run(host string, port uint64, service string, regPort uint64, dir string) error {
	cc := constant.NewClientConfig(constant.WithNamespaceId(""), constant.WithTimeoutMs(3000),
		constant.WithNotLoadCacheAtStart(true), constant.WithLogDir(filepath.Join(dir, "log")),
		constant.WithCacheDir(filepath.Join(dir, "cache")), constant.WithLogLevel("warn"))
	sc := []constant.ServerConfig{*constant.NewServerConfig(host, port, constant.WithContextPath("/nacos"))}
	c, err := clients.NewNamingClient(vo.NacosClientParam{ClientConfig: cc, ServerConfigs: sc})
	if err != nil {
		return err
	}
	defer c.CloseClient()
	// The SDK waits 100 ms for the server to register a new connection; a
	// busy server takes longer and the first call then reconnects (see
	// registry/nacos's sdkSettle).
	time.Sleep(500 * time.Millisecond)
	var mu sync.Mutex
	enc := json.NewEncoder(os.Stdout)
	emit := func(l Line) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(l)
	}
	if ok, err := c.RegisterInstance(vo.RegisterInstanceParam{Ip: "127.0.0.1", Port: regPort, ServiceName: service,
		Weight: 10, Enable: true, Healthy: true, Ephemeral: true,
		Metadata: map[string]string{"idc": "shanghai", "kind": "grpc", "version": "v1"}}); !ok || err != nil {
		return fmt.Errorf("RegisterInstance: %v %v", ok, err)
	}
	emit(Line{Registered: true})
	for deadline := time.Now().Add(10 * time.Second); !c.ServerHealthy(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("not connected after 10s")
		}
	}
	if err := c.Subscribe(&vo.SubscribeParam{ServiceName: service, SubscribeCallback: func(ins []model.Instance, err error) {
		l := Line{Instances: []Instance{}}
		for _, in := range ins {
			if in.Healthy && in.Enable {
				l.Instances = append(l.Instances, Instance{Port: in.Port, Metadata: in.Metadata})
			}
		}
		emit(l)
	}}); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}
