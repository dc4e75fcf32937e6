package nacos_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	gosync "sync"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/nacos"
	"github.com/nacos-group/nacos-sdk-go/v2/clients"
	"github.com/nacos-group/nacos-sdk-go/v2/common/constant"
	"github.com/nacos-group/nacos-sdk-go/v2/model"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"
)

// TestInteropSDK: an instance registered the way nacos-sdk-go's own example
// does (RegisterInstance, ephemeral, weight 10, with the kind metadata of
// kratos's contrib/registry/nacos) is in the Source's view, its kind as its
// endpoint, and
// the Registrar's instance is what an SDK consumer selects (SelectInstances
// with HealthyOnly), READY time included; after EJECTED the SDK consumer no
// longer selects it.
func TestInteropSDK(t *testing.T) {
	const svc = "interop-svc"
	dir := t.TempDir()
	cc := constant.NewClientConfig(constant.WithNamespaceId(""), constant.WithTimeoutMs(3000),
		constant.WithNotLoadCacheAtStart(true), constant.WithLogDir(filepath.Join(dir, "log")),
		constant.WithCacheDir(filepath.Join(dir, "cache")), constant.WithLogLevel("warn"))
	sc := []constant.ServerConfig{*constant.NewServerConfig("127.0.0.1", uint64(srv.Port), constant.WithContextPath("/nacos"))}
	// The package's Watch calls of earlier tests may still close their
	// clients in the background: nacos-sdk-go's making and closing race.
	unlock := nacos.LockSDK()
	c, err := clients.NewNamingClient(vo.NacosClientParam{ClientConfig: cc, ServerConfigs: sc})
	unlock()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { unlock := nacos.LockSDK(); c.CloseClient(); unlock() }()
	if ok, err := c.RegisterInstance(vo.RegisterInstanceParam{Ip: "127.0.0.1", Port: 18201, ServiceName: svc,
		Weight: 10, Enable: true, Healthy: true, Ephemeral: true,
		// kratos's contrib/registry/nacos adds kind (the endpoint's scheme)
		// and version to the metadata.
		Metadata: map[string]string{"idc": "shanghai", "kind": "grpc", "version": "v1"}}); !ok || err != nil {
		t.Fatalf("SDK RegisterInstance: %v %v", ok, err)
	}
	r := newRegistrar(t, testOptions(t, svc, 18202))
	ready := sync(t, r, lifecycle.Ready, lifecycle.CauseChecks)

	views := make(chan registry.View, 64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- nacos.Watch(ctx, svc, nacos.WatchOptions{Server: nacos.Server{Addrs: []string{srv.Addr}},
			ReadInterval: 300 * time.Millisecond, SDKDir: t.TempDir()}, func(v registry.View) { views <- v })
	}()
	defer func() { cancel(); <-done }()
	var v registry.View
	for v = next(t, views); len(v.Instances) < 2; v = next(t, views) {
	}
	for _, in := range v.Instances {
		if in.Port == 18201 && (in.Meta["idc"] != "shanghai" || in.Meta[nacos.MetaWeight] != "10" ||
			!slices.Equal(in.Endpoints, []registry.Endpoint{{Scheme: "grpc", Address: "127.0.0.1", Port: 18201}})) {
			t.Fatalf("the SDK's instance in the view (want its kind as its one endpoint): %+v", in)
		}
	}

	// An SDK consumer as the SDK's example writes one: Subscribe, keeping
	// the healthy, enabled instances of each push. (Not SelectInstances:
	// with v2.3.5 it reads the cache that the push handler sorts in place,
	// a data race that -race reports.)
	// Subscribing before the client's connection is up races inside the
	// SDK (see the watch's subscription).
	eventually(t, 10*time.Second, "the SDK client connected", func() (bool, string) { return c.ServerHealthy(), "" })
	var mu gosync.Mutex
	var pushed []model.Instance
	if err := c.Subscribe(&vo.SubscribeParam{ServiceName: svc, SubscribeCallback: func(ins []model.Instance, err error) {
		mu.Lock()
		defer mu.Unlock()
		pushed = pushed[:0]
		for _, in := range ins {
			if in.Healthy && in.Enable {
				pushed = append(pushed, model.Instance{Port: in.Port, Metadata: maps.Clone(in.Metadata)})
			}
		}
	}}); err != nil {
		t.Fatal(err)
	}
	selected := func() (model.Instance, bool) {
		mu.Lock()
		defer mu.Unlock()
		for _, in := range pushed {
			if in.Port == 18202 {
				return in, true
			}
		}
		return model.Instance{}, false
	}
	eventually(t, 5*time.Second, "the SDK consumer receives the registrar's instance with its READY time", func() (bool, string) {
		in, ok := selected()
		return ok && in.Metadata[registry.MetaReadyAt] == ready.UTC().Format(time.RFC3339Nano), fmt.Sprint(in, ok)
	})
	sync(t, r, lifecycle.Ejected, lifecycle.CauseChecks)
	eventually(t, 5*time.Second, "the SDK consumer drops it after EJECTED", func() (bool, string) {
		_, ok := selected()
		return !ok, "still pushed as healthy"
	})
}
