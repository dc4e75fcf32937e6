package etcdtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestStartRestartWipeStop: a key survives Restart, is gone after
// RestartWiped (with the revision back near 1), and Stop makes the member
// refuse requests.
func TestStartRestartWipeStop(t *testing.T) {
	s := etcdtest.Start(t)
	c := s.Client(t)
	get := func() (int, int64, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := c.Get(ctx, "k")
		if err != nil {
			return 0, 0, err
		}
		return len(r.Kvs), r.Header.Revision, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for range 5 {
		if _, err := c.Put(ctx, "k", "v"); err != nil {
			t.Fatal(err)
		}
	}

	s.Restart(t)
	n, rev, err := get()
	if err != nil || n != 1 || rev < 6 {
		t.Fatalf("after Restart: %d keys at revision %d (%v); want the key at revision >= 6", n, rev, err)
	}

	s.RestartWiped(t)
	n, rev, err = get()
	if err != nil || n != 0 || rev >= 6 {
		t.Fatalf("after RestartWiped: %d keys at revision %d (%v); want none, revision < 6", n, rev, err)
	}

	s.Stop()
	if s.Running() {
		t.Fatal("Running after Stop")
	}
	sctx, scancel := context.WithTimeout(context.Background(), time.Second)
	defer scancel()
	if _, err := c.Get(sctx, "k"); err == nil {
		t.Fatal("etcd still answers after Stop")
	}
	s.Stop() // idempotent
	if env := s.Env(); len(env) != 1 || env[0] != "ETCD_ENDPOINTS="+s.Endpoint {
		t.Fatalf("Env() = %v", env)
	}
}
