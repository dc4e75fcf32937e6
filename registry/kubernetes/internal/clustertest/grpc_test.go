//go:build linux

package clustertest

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drainkit/drainkit/consumer/grpcresolver"
	"github.com/drainkit/drainkit/internal/kubetest"
	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/internal/testpoll"
	"github.com/drainkit/drainkit/registry"
	dkube "github.com/drainkit/drainkit/registry/kubernetes"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/peer"
	"k8s.io/client-go/kubernetes"
)

// drainkitImage is the drainkit binary's image (`drainkit serve` with its
// gRPC service).
const drainkitImage = "drainkit.invalid/drainkit:slices"

// greeterManifest is a Deployment of `drainkit serve` (the drainkit
// strategy, HTTP and gRPC, readiness on /servingz, the preStop hook
// through the binary, as examples/kubernetes ships it) behind a headless
// Service whose ports are named "grpc" and "http": the instances' "grpc"
// endpoint is the one the resolver dials.
const greeterManifest = `apiVersion: apps/v1
kind: Deployment
metadata: {name: greeter}
spec:
  replicas: 2
  selector: {matchLabels: {app: greeter}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  template:
    metadata: {labels: {app: greeter}}
    spec:
      terminationGracePeriodSeconds: 35
      containers:
      - name: greeter
        image: ` + drainkitImage + `
        imagePullPolicy: Never
        args: [serve, --strategy, drainkit, --http-addr, ":8080", --grpc-addr, ":9090"]
        env:
        - {name: DRAINKIT_ADMIN_ADDR, value: ":8081"}
        - {name: DRAINKIT_PROPAGATION_MIN, value: "1s"}
        ports: [{name: grpc, containerPort: 9090}, {name: http, containerPort: 8080}]
        readinessProbe:
          httpGet: {path: /servingz, port: 8081}
          periodSeconds: 1
          failureThreshold: 1
        lifecycle:
          preStop:
            exec: {command: [/drainkit, prestop]}
---
apiVersion: v1
kind: Service
metadata: {name: greeter}
spec:
  clusterIP: None
  selector: {app: greeter}
  ports:
  - {name: grpc, port: 9090, targetPort: grpc}
  - {name: http, port: 8080, targetPort: http}
`

// The gRPC resolver (consumer/grpcresolver) fed by the source, on the
// pods of a headless Service: calls reach every pod the slices list, and
// through a `kubectl rollout restart` (each old pod drained by drainkit:
// NOT_SERVING, then GOAWAY) every call is answered and the calls move to
// the new pods.
func testGRPC(t *testing.T, c *kubetest.Cluster, admin kubernetes.Interface) {
	ctx := context.Background()
	kubectl := func(stdin string, args ...string) string {
		t.Helper()
		return c.MustKubectl(t, ctx, stdin, args...)
	}
	// In the workspace (GOWORK unset): cmd/drainkit is a go.work module.
	importBinary(t, c, "../../../..", "./cmd/drainkit", "", drainkitImage)
	kubectl(greeterManifest, "apply", "-f", "-")
	kubectl("", "rollout", "status", "deployment/greeter", "--timeout", waitFor.String())

	lg, _ := testlog.New(t, "resolver log")
	var mu sync.Mutex
	var w *registry.View
	b, err := grpcresolver.NewBuilder(grpcresolver.Options{Source: func(service string) (registry.Source, error) {
		src := dkube.NewSource(admin, ns, service, dkube.WatchOptions{Logger: lg})
		// Keep the latest view the resolver was fed, to compare the
		// peers with.
		return registry.SourceFunc(func(ctx context.Context, fn func(registry.View)) error {
			return src.Watch(ctx, func(v registry.View) {
				mu.Lock()
				w = &v
				mu.Unlock()
				fn(v)
			})
		}), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	view := func() registry.View {
		mu.Lock()
		defer mu.Unlock()
		if w == nil {
			return registry.View{}
		}
		return *w
	}
	conn, err := grpc.NewClient("drainkit:///greeter", append(grpcresolver.DialOptions(b),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return c.DialContext(ctx, "tcp", addr) }))...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := testpb.NewTestServiceClient(conn)
	// call makes one EmptyCall and returns the pod IP that answered.
	call := func() (string, error) {
		var p peer.Peer
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := client.EmptyCall(cctx, &testpb.Empty{}, grpc.Peer(&p)); err != nil {
			return "", err
		}
		host, _, _ := strings.Cut(p.Addr.String(), ":")
		return host, nil
	}
	seen := map[string]bool{}
	testpoll.Eventually(t, waitFor, "calls answered by both pods", func() (bool, string) {
		ip, err := call()
		if err != nil {
			return false, err.Error()
		}
		seen[ip] = true
		v := view()
		return len(v.Instances) == 2 && v.Has(ip) && len(seen) == 2, describe(v)
	})
	old := view()
	for _, in := range old.Instances {
		if in.Meta[dkube.MetaPod] == "" || !slices.ContainsFunc(in.Endpoints, func(e registry.Endpoint) bool { return e.Scheme == "grpc" && e.Port == 9090 }) {
			t.Fatalf("view %s: want pods with a grpc endpoint on 9090: %+v", describe(old), in)
		}
	}

	// Calls one after another through the rollout: none may fail.
	stop := make(chan struct{})
	type result struct {
		n      int
		failed []string
		byIP   map[string]int
	}
	done := make(chan result)
	go func() {
		r := result{byIP: map[string]int{}}
		for {
			select {
			case <-stop:
				done <- r
				return
			default:
			}
			ip, err := call()
			r.n++
			if err != nil {
				r.failed = append(r.failed, err.Error())
				continue
			}
			r.byIP[ip]++
		}
	}()
	kubectl("", "rollout", "restart", "deployment/greeter")
	kubectl("", "rollout", "status", "deployment/greeter", "--timeout", waitFor.String())
	// Until the view is the new pods only and a call reached each.
	var fresh registry.View
	testpoll.Eventually(t, waitFor, "the view without the old pods", func() (bool, string) {
		fresh = view()
		return len(fresh.Instances) == 2 && !slices.ContainsFunc(fresh.Instances, func(in registry.Instance) bool { return old.Has(in.ID) }), describe(fresh)
	})
	newSeen := map[string]bool{}
	testpoll.Eventually(t, waitFor, "calls answered by both new pods", func() (bool, string) {
		ip, err := call()
		if err == nil && fresh.Has(ip) {
			newSeen[ip] = true
		}
		return len(newSeen) == 2, describe(fresh)
	})
	close(stop)
	r := <-done
	t.Logf("through the rollout: %d calls, %d failed, by pod %v", r.n, len(r.failed), r.byIP)
	if len(r.failed) > 0 {
		t.Errorf("%d of %d calls failed through the rollout, first: %s", len(r.failed), r.n, r.failed[0])
	}
	for _, in := range old.Instances {
		if r.byIP[in.ID] == 0 && r.n > 0 {
			t.Logf("old pod %s answered no call after the rollout started", in.ID)
		}
	}
}
