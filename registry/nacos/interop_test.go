package nacos_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	gosync "sync"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/childtest"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/nacos"
)

// TestInteropSDK: an instance registered the way nacos-sdk-go's own example
// does (RegisterInstance, ephemeral, weight 10, with the kind metadata of
// kratos's contrib/registry/nacos) is in the Source's view, its kind as its
// endpoint; and the Registrar's instance is what an SDK consumer receives
// in its subscription's pushes (healthy and enabled), READY time included;
// after EJECTED the SDK consumer no longer has it. The SDK's side is
// internal/sdkconsumer, a process of its own (see there why).
func TestInteropSDK(t *testing.T) {
	const svc = "interop-svc"
	sdk := startSDKConsumer(t, svc, 18201)
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

	selected := func() (sdkInstance, bool) {
		for _, in := range sdk.latest() {
			if in.Port == 18202 {
				return in, true
			}
		}
		return sdkInstance{}, false
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

// sdkInstance is an instance of internal/sdkconsumer's output.
type sdkInstance struct {
	Port     uint64            `json:"port"`
	Metadata map[string]string `json:"metadata"`
}

// sdkConsumer is a running internal/sdkconsumer: its latest push.
type sdkConsumer struct {
	mu   gosync.Mutex
	last []sdkInstance
}

func (c *sdkConsumer) latest() []sdkInstance {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

var sdkConsumerBin = childtest.NewOnce("github.com/drainkit/drainkit/registry/nacos/internal/sdkconsumer")

// startSDKConsumer starts internal/sdkconsumer against srv, registering
// port in service, and returns once it registered; it is stopped (its
// stdin closed, then killed) when the test ends.
func startSDKConsumer(t *testing.T, service string, port int) *sdkConsumer {
	t.Helper()
	bin := sdkConsumerBin.Path(t)
	cmd := exec.Command(bin, "-port", strconv.Itoa(srv.Port), "-service", service,
		"-register-port", strconv.Itoa(port), "-dir", t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &sdkConsumer{}
	registered := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		for sc.Scan() {
			var l struct {
				Registered bool          `json:"registered"`
				Instances  []sdkInstance `json:"instances"`
			}
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				continue
			}
			if l.Registered {
				close(registered)
				continue
			}
			c.mu.Lock()
			c.last = l.Instances
			c.mu.Unlock()
		}
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case <-registered:
	case <-exited:
		t.Fatalf("sdkconsumer exited before registering:\n%s", stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("sdkconsumer did not register within 30s:\n%s", stderr.String())
	}
	return c
}
