package drainkit_test

import (
	"context"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/registrytest"
)

// secondServer is a WithServer listener (scheme "grpc" by default) served by
// httpdrain: any lifecycle.Server does for the registration.
func secondServer(name string) drainkit.Option {
	return drainkit.WithServer(name, "127.0.0.1:0", func(lc *lifecycle.Lifecycle, ln net.Listener) (lifecycle.Server, error) {
		return httpdrain.New(&http.Server{Handler: http.NotFoundHandler()}, ln), nil
	})
}

// TestOneRegistrationHoldsEveryListener: a process with an HTTP and a gRPC
// listener hands one registrar both endpoints, each with its scheme and
// bound port, and the drain deregisters that one registration once.
func TestOneRegistrationHoldsEveryListener(t *testing.T) {
	mem := registrytest.NewMemory("svc")
	var got drainkit.Bound
	build := func(_ *config.Config, b drainkit.Bound) (lifecycle.Registrar, error) { got = b; return mem, nil }
	addrs, drain := run(t, []drainkit.Option{secondServer("grpc"), drainkit.WithRegistrar("mem", drainkit.Registration{Build: build})})
	if err := mem.Wait(context.Background(), func(s registry.Status) bool { return s.Health == registry.Passing }); err != nil {
		t.Fatal(err)
	}
	drain()
	port := func(name string) int { return addrs[name].(*net.TCPAddr).Port }
	want := []registry.Endpoint{{Scheme: "http", Address: "127.0.0.1", Port: port("http")}, {Scheme: "grpc", Address: "127.0.0.1", Port: port("grpc")}}
	if !slices.Equal(got.Endpoints, want) {
		t.Errorf("Bound.Endpoints = %v, want %v", got.Endpoints, want)
	}
	var syncs, deregs int
	for _, op := range mem.Ops() {
		switch op.Kind {
		case registrytest.OpSync:
			syncs++
		case registrytest.OpDeregister:
			deregs++
		}
	}
	if syncs == 0 || deregs != 1 || mem.Status().Registrations != 1 {
		t.Errorf("syncs %d, deregistrations %d, registrations %d: want one registration, deregistered once", syncs, deregs, mem.Status().Registrations)
	}
}

// TestEndpointScheme: WithEndpointScheme renames a listener's scheme or
// keeps it out; two registered listeners with one scheme, or a scheme for
// no listener, exit 2 before any listener opens, naming the listeners.
func TestEndpointScheme(t *testing.T) {
	var got []registry.Endpoint
	build := func(_ *config.Config, b drainkit.Bound) (lifecycle.Registrar, error) {
		got = b.Endpoints
		return nil, nil
	}
	addrs, drain := run(t, []drainkit.Option{secondServer("h2"), drainkit.WithEndpointScheme("h2", "H2C"),
		drainkit.WithEndpointScheme("http", ""), drainkit.WithRegistrar("r", drainkit.Registration{Build: build})})
	drain()
	want := []registry.Endpoint{{Scheme: "h2c", Address: "127.0.0.1", Port: addrs["h2"].(*net.TCPAddr).Port}}
	if !slices.Equal(got, want) {
		t.Errorf("Bound.Endpoints = %v, want %v", got, want)
	}

	for _, c := range []struct {
		name string
		opts []drainkit.Option
		want string
	}{
		{"same scheme", []drainkit.Option{drainkit.WithHTTP("public", "127.0.0.1:0", nil), drainkit.WithHTTP("internal", "127.0.0.1:0", nil)},
			`listeners public and internal are both registered with endpoint scheme "http"`},
		{"no such listener", []drainkit.Option{drainkit.WithHTTP("public", "127.0.0.1:0", nil), drainkit.WithEndpointScheme("grpc", "grpc")},
			`no listener is named "grpc"`},
		{"bad scheme", []drainkit.Option{drainkit.WithHTTP("public", "127.0.0.1:0", nil), drainkit.WithEndpointScheme("public", "h t")},
			`listener public: endpoint scheme "h t"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := &testlog.Buffer{}
			opts := append(c.opts, drainkit.WithOutput(out), drainkit.WithEnv([]string{}),
				drainkit.WithRegistrar("r", drainkit.Registration{Build: build}))
			if code := drainkit.Run(context.Background(), []string{"--admin-addr", "127.0.0.1:0"}, opts...); code != 2 {
				t.Fatalf("exit code %d, want 2; output:\n%s", code, out)
			}
			if !strings.Contains(out.String(), c.want) {
				t.Errorf("output lacks %s:\n%s", strconv.Quote(c.want), out)
			}
		})
	}
}
