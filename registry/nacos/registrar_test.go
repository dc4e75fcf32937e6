package nacos_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/childtest"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/nacos"
)

func newRegistrar(t *testing.T, o nacos.Options) *nacos.Registrar {
	t.Helper()
	r, err := nacos.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func sync(t *testing.T, r *nacos.Registrar, to lifecycle.State, cause lifecycle.Cause) time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	at := time.Now()
	// A step whose call outlasted CallTimeout (a busy machine) fails this
	// Sync; the registrar retries every SyncInterval, and so does the test
	// until its deadline.
	tr := lifecycle.Transition{To: to, Cause: cause, At: at}
	for err := r.Sync(ctx, tr); err != nil; err = r.Sync(ctx, tr) {
		if ctx.Err() != nil {
			t.Fatalf("Sync(%s): %v", to, err)
		}
		t.Logf("Sync(%s): %v; again", to, err)
	}
	return at
}

// TestRegistrarLifecycle: READY registers a healthy, enabled ephemeral
// instance with drainkit_ready_at; EJECTED keeps the registration but turns
// it unhealthy (gone from consumers' list); READY again brings it back with
// the new READY time; Deregister removes it and Confirm sees it gone.
func TestRegistrarLifecycle(t *testing.T) {
	const svc = "lifecycle-svc"
	o := testOptions(t, svc, 18001)
	o.Weight = 3
	o.Meta = map[string]string{"zone": "a"}
	r := newRegistrar(t, o)
	ready := sync(t, r, lifecycle.Ready, lifecycle.CauseChecks)
	waitList(t, adminList, svc, 18001, "registered after READY", func(in instance, ok bool) bool {
		return ok && in.Healthy && in.Enabled && in.Weight == 3 && in.Metadata["zone"] == "a" &&
			in.Metadata[registry.MetaReadyAt] == ready.UTC().Format(time.RFC3339Nano)
	})
	if st := r.Status(); st.Health != registry.Passing || st.Registrations != 1 {
		t.Fatalf("status %+v", st)
	}

	sync(t, r, lifecycle.Ejected, lifecycle.CauseChecks)
	waitList(t, adminList, svc, 18001, "registered, unhealthy and enabled after EJECTED", func(in instance, ok bool) bool {
		return ok && !in.Healthy && in.Enabled
	})
	waitList(t, consumerList, svc, 18001, "gone from consumers' list after EJECTED", func(_ instance, ok bool) bool { return !ok })
	if st := r.Status(); st.Health != registry.Critical {
		t.Fatalf("status %+v", st)
	}

	ready2 := sync(t, r, lifecycle.Ready, lifecycle.CauseChecks)
	waitList(t, consumerList, svc, 18001, "back in consumers' list with the new READY time", func(in instance, ok bool) bool {
		return ok && in.Metadata[registry.MetaReadyAt] == ready2.UTC().Format(time.RFC3339Nano)
	})

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := r.Deregister(ctx); err != nil {
		t.Fatal(err)
	}
	dereg := time.Since(start)
	if err := r.Confirm(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("deregistered in %s, confirmed gone %s after the start", dereg.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if err := r.Sync(ctx, lifecycle.Transition{To: lifecycle.Ready}); err != registry.ErrDeregistered {
		t.Fatalf("Sync after Deregister = %v", err)
	}
}

// waitList polls list until cond holds for the instance on port (found
// says whether it is listed), up to 5s, and returns it.
func waitList(t *testing.T, list func(string) ([]instance, error), svc string, port int, what string,
	cond func(in instance, found bool) bool) instance {
	t.Helper()
	return waitListWithin(t, 5*time.Second, list, svc, port, what, cond)
}

// waitListWithin is waitList with its own timeout.
func waitListWithin(t *testing.T, timeout time.Duration, list func(string) ([]instance, error), svc string, port int,
	what string, cond func(in instance, found bool) bool) instance {
	t.Helper()
	var in instance
	took := eventually(t, timeout, what, func() (bool, string) {
		l, err := list(svc)
		if err != nil {
			return false, err.Error()
		}
		var ok bool
		in, ok = find(l, port)
		return cond(in, ok), fmt.Sprintf("%+v found %v", in, ok)
	})
	t.Logf("%s: after %s", what, took.Round(time.Millisecond))
	return in
}

// TestEveryEndpointOneInstance: an instance serving HTTP and gRPC is one
// Nacos instance at the primary (HTTP) endpoint whose metadata carries
// kind (kratos's) and every endpoint; the Source turns them back into the
// instance's endpoints, so a gRPC consumer dials the gRPC port; one
// deregistration removes every protocol.
func TestEveryEndpointOneInstance(t *testing.T) {
	const svc = "multi-svc"
	o := testOptions(t, svc, 1)
	o.SetEndpoints([]registry.Endpoint{{Scheme: "http", Address: "127.0.0.1", Port: 18301}, {Scheme: "grpc", Port: 19301}})
	r := newRegistrar(t, o)
	sync(t, r, lifecycle.Ready, lifecycle.CauseChecks)
	in := waitList(t, adminList, svc, 18301, "registered at the primary endpoint", func(_ instance, ok bool) bool { return ok })
	if in.Metadata[nacos.MetaKind] != "http" || in.Metadata[nacos.MetaEndpoints] != "http://127.0.0.1:18301,grpc://127.0.0.1:19301" {
		t.Fatalf("metadata %v", in.Metadata)
	}
	if l := mustList(t, adminList, svc); len(l) != 1 {
		t.Fatalf("%d instances, want the one: %+v", len(l), l)
	}

	views := make(chan registry.View, 64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- nacos.Watch(ctx, svc, nacos.WatchOptions{Server: nacos.Server{Addrs: []string{srv.Addr}}, NoSubscribe: true,
			SDKDir: t.TempDir()}, func(v registry.View) { views <- v })
	}()
	v := next(t, views)
	cancel()
	<-done
	want := []registry.Endpoint{{Scheme: "http", Address: "127.0.0.1", Port: 18301}, {Scheme: "grpc", Address: "127.0.0.1", Port: 19301}}
	if len(v.Instances) != 1 || !slices.Equal(v.Instances[0].Endpoints, want) {
		t.Fatalf("view %+v, want one instance with endpoints %v", v.Instances, want)
	}
	if g, ok := v.Instances[0].ForScheme("grpc"); !ok || g.HostPort() != "127.0.0.1:19301" {
		t.Fatalf("ForScheme(grpc) = %s, %v", g.HostPort(), ok)
	}

	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer dcancel()
	if err := r.Deregister(dctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Confirm(dctx); err != nil {
		t.Fatal(err)
	}
	if l := mustList(t, publisherList, svc); len(l) != 0 {
		t.Fatalf("still registered after one deregistration: %+v", l)
	}
}

// TestSDKDir: the SDK's files go under Options.SDKDir, in a directory of
// this process (its log) with a cache directory per client that Close
// removes; the directory a drainkit process killed with SIGKILL left there
// is removed when a process first uses the same SDKDir, and nothing else
// is: sdk_dir pointed at a directory holding other files once removed
// every subdirectory older than a minute or holding an unlocked file
// named "lock".
func TestSDKDir(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	var users []string
	for _, u := range []struct{ name, file string }{
		{"data", ""}, {"data-locked", "lock"}, {"1-dead", "lock"}, {"2-other", "drainkit-owner"},
	} {
		d := filepath.Join(dir, u.name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if u.file != "" {
			if err := os.WriteFile(filepath.Join(d, u.file), []byte("someone else's\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(d, old, old); err != nil {
			t.Fatal(err)
		}
		users = append(users, d)
	}
	// A drainkit process's directory, left by SIGKILL.
	const killedSvc = "sdkdir-killed-svc"
	ch := childtest.Start(t, child.Path(t), childEnv("DRAINKIT_REGISTRY_NACOS_SDK_DIR="+dir), "--registry-service", killedSvc)
	waitList(t, adminList, killedSvc, childPort(t, ch), "the child registered", func(_ instance, ok bool) bool { return ok })
	ch.Signal(syscall.SIGKILL)
	ch.WaitExit(15 * time.Second)
	killed, err := filepath.Glob(filepath.Join(dir, strconv.Itoa(ch.Cmd.Process.Pid)+"-*"))
	if err != nil || len(killed) != 1 {
		t.Fatalf("the killed child's directories under %s: %v %v", dir, killed, err)
	}

	o := testOptions(t, "sdkdir-svc", 18401)
	o.SDKDir = dir
	r := newRegistrar(t, o)
	sync(t, r, lifecycle.Ready, lifecycle.CauseChecks)
	if _, err := os.Stat(killed[0]); !os.IsNotExist(err) {
		t.Fatalf("the killed drainkit process's directory is still there: %v", err)
	}
	for _, d := range users {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("a directory drainkit did not make is gone: %v", err)
		}
	}
	mine, err := filepath.Glob(filepath.Join(dir, strconv.Itoa(os.Getpid())+"-*"))
	if err != nil || len(mine) != 1 {
		t.Fatalf("this process's directories under %s: %v %v", dir, mine, err)
	}
	caches, _ := filepath.Glob(filepath.Join(mine[0], "cache-*"))
	if len(caches) != 1 {
		t.Fatalf("cache directories %v, want the registrar's one", caches)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(caches[0]); !os.IsNotExist(err) {
		t.Fatalf("the cache directory is still there after Close: %v", err)
	}
}
