package consul

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/consul/consultest"
	"github.com/hashicorp/consul/api"
)

// catalogReadyAt returns the instance's registry.MetaReadyAt in the catalog
// ("" if the catalog does not list it) and a detail for failure messages.
func catalogReadyAt(c *api.Client, service, id string) (string, string) {
	svcs, _, err := c.Catalog().Service(service, "", nil)
	if err != nil {
		return "", "error: " + err.Error()
	}
	for _, s := range svcs {
		if s.ServiceID == id {
			return s.ServiceMeta[registry.MetaReadyAt], fmt.Sprint(s.ServiceMeta)
		}
	}
	return "", "not in the catalog"
}

// TestReadyAgainPublishesLatestReadyAt: READY -> EJECTED -> READY publishes
// the second READY's time under registry.MetaReadyAt (consumers re-ramp, as
// after Envoy's slow start on an endpoint healthy again), for both causes of
// EJECTED. Consumers never see the instance passing with the old time; the
// check passes after the restore and the heartbeat keeps it passing; no
// maintenance is left; the count of registrations is unchanged (the agent
// never lost the instance).
func TestReadyAgainPublishesLatestReadyAt(t *testing.T) {
	for i, cause := range []lifecycle.Cause{lifecycle.CauseChecks, lifecycle.CauseOperator} {
		t.Run(string(cause), func(t *testing.T) {
			a := consultest.Start(t)
			c := a.Client(t)
			o, buf := testOptions(t, a, "ready-again", 18090+i)
			r := newRegistrar(t, o)
			ctx := context.Background()
			first := time.Now().Add(-time.Hour)
			stamp := func(at time.Time) string { return at.UTC().Format(time.RFC3339Nano) }
			if err := r.Sync(ctx, lifecycle.Transition{To: lifecycle.Ready, Cause: lifecycle.CauseWarmup, Reason: "test", At: first}); err != nil {
				t.Fatal(err)
			}
			eventually(t, 5*time.Second, "first READY time in the catalog", func() (bool, string) {
				got, d := catalogReadyAt(c, o.Service, r.ID())
				return got == stamp(first), d
			})
			if err := r.Sync(ctx, tr(lifecycle.Ejected, cause)); err != nil {
				t.Fatal(err)
			}
			eventually(t, 5*time.Second, "out of the passing list", func() (bool, string) {
				ids, err := passingIDs(c, o.Service)
				return err == nil && !hasID(ids, r.ID()), fmt.Sprint(ids, err)
			})

			// Watch the passing list across the restore: every view that
			// lists the instance must carry the new READY time.
			second := time.Now()
			var (
				mu    sync.Mutex
				stale []string
			)
			wctx, stop := context.WithCancel(ctx)
			watchDone := make(chan struct{})
			go func() {
				defer close(watchDone)
				_ = Watch(wctx, c, o.Service, WatchOptions{WaitTime: time.Second, MinBackoff: 50 * time.Millisecond}, func(v registry.View) {
					for _, in := range v.Instances {
						if in.ID == r.ID() && in.Meta[registry.MetaReadyAt] != stamp(second) {
							mu.Lock()
							stale = append(stale, in.Meta[registry.MetaReadyAt])
							mu.Unlock()
						}
					}
				})
			}()
			defer func() { stop(); <-watchDone }()

			if err := r.Sync(ctx, lifecycle.Transition{To: lifecycle.Ready, Cause: cause, Reason: "test", At: second}); err != nil {
				t.Fatal(err)
			}
			eventually(t, 5*time.Second, "passing with the second READY time in the catalog", func() (bool, string) {
				ids, err := passingIDs(c, o.Service)
				got, d := catalogReadyAt(c, o.Service, r.ID())
				return hasID(ids, r.ID()) && got == stamp(second), fmt.Sprint(ids, err, " meta ", d)
			})
			if m := checkStatus(c, "_service_maintenance:"+r.ID()); m != "" {
				t.Fatalf("maintenance check %q after READY again", m)
			}
			// The heartbeat keeps the check passing past the TTL.
			deadline := time.Now().Add(testTTL + testHeartbeat)
			for time.Now().Before(deadline) {
				if s := checkStatus(c, r.CheckID()); s != api.HealthPassing {
					t.Fatalf("TTL check %q after READY again; registrar %+v", s, r.Status())
				}
				time.Sleep(100 * time.Millisecond) // polling interval
			}
			if st := r.Status(); st.Health != registry.Passing || st.Registrations != 1 || st.LastError != "" {
				t.Fatalf("status %+v; want passing, one registration, no error", st)
			}
			stop()
			<-watchDone
			mu.Lock()
			defer mu.Unlock()
			if len(stale) != 0 {
				t.Fatalf("the instance passed with an older READY time %q (want %s)\n%s", stale, stamp(second), buf.String())
			}
		})
	}
}
