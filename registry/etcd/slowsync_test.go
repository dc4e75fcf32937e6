package etcd_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry/etcd"
	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
)

// slowAnswer is the real registrar behind a client that ignores
// cancellation and answers slowly: its Sync writes the instance in etcd as
// usual, then does not return until release is closed.
type slowAnswer struct {
	*etcd.Registrar
	release chan struct{}
}

func (s slowAnswer) Sync(ctx context.Context, t lifecycle.Transition) error {
	err := s.Registrar.Sync(context.WithoutCancel(ctx), t)
	<-s.release
	return err
}

// TestSyncRunningAtDrainStartIsDeregistered (issue 18 item 2), against a
// real etcd server: the first Sync wrote the key but has not returned when
// the drain starts; the drain still revokes the lease, so the key is gone
// when Run returns, instead of staying until the lease's TTL after Close.
func TestSyncRunningAtDrainStartIsDeregistered(t *testing.T) {
	s := etcdtest.Start(t)
	c := s.Client(t)
	o, _ := testOptions(t, s, "slow-svc", 18090)
	r := newRegistrar(t, o)
	slow := slowAnswer{r, make(chan struct{})}
	defer close(slow.release)
	lc := newLifecycle(t, slow)
	done := run(t, lc)
	eventually(t, 5*time.Second, "key written after READY", func() (bool, string) {
		_, _, found, err := getKey(t, c, r.Key())
		return found, fmt.Sprint(err)
	})
	if err := lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	err := <-done
	done <- err
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, _, found, _ := getKey(t, c, r.Key()); found || leaseTTL(t, c, r.Lease()) != -1 {
		t.Fatal("key or lease left after the drain: the registrar whose Sync was running was not deregistered")
	}
	if tl, _ := lc.Timeline(); !hasStep(tl, lifecycle.StepDeregistered) {
		t.Errorf("timeline %+v lacks deregistered", tl.Steps)
	}
}

func hasStep(tl lifecycle.Timeline, name string) bool {
	_, ok := tl.Offset(name)
	return ok
}
