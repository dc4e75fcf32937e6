package consumer_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/registry"
)

// zoned returns a source listing bs, each in the zone zones gives it under
// the "zone" metadata key.
func zoned(t *testing.T, zones map[*backend]string) registry.Source {
	t.Helper()
	var ins []registry.Instance
	for b, z := range zones {
		in := b.instance()
		in.Meta = map[string]string{"zone": z}
		ins = append(ins, in)
	}
	return consumer.StaticInstances("orders", ins)
}

// attempt sends one GET and returns where it went and how often it tried.
func attempt(tr http.RoundTripper) (consumer.Outcome, error) {
	var out consumer.Outcome
	req, _ := http.NewRequestWithContext(consumer.WithOutcome(context.Background(), &out), "GET", "http://orders/x", nil)
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	return out, err
}

// Two zones of two instances, the consumer in zone a: every call goes to a
// while a is healthy; once a's two are killed, calls spill to b as soon as
// both are found failing (one ejected, the other's ejection refused by the
// per-zone cap: both count as unhealthy), within the calls that take, and
// none fails.
func TestZoneAwareSpillsAfterLocalZoneDies(t *testing.T) {
	a1, a2, b1, b2 := newBackend(t, "a1", nil), newBackend(t, "a2", nil), newBackend(t, "b1", nil), newBackend(t, "b2", nil)
	src := zoned(t, map[*backend]string{a1: "a", a2: "a", b1: "b", b2: "b"})
	_, tr, logs := newClient(t, src, consumer.WatcherOptions{}, consumer.Options{
		Zones:   consumer.Zones{Local: "a", MinClusterSize: 4},
		Outlier: consumer.OutlierDetection{BaseEjectionTime: time.Minute},
	})
	for i := range 40 {
		if _, err := do(tr, "GET", ""); err != nil {
			t.Fatalf("GET %d: %v", i, err)
		}
	}
	if a1.hits.Load() != 20 || a2.hits.Load() != 20 || b1.hits.Load()+b2.hits.Load() != 0 {
		t.Fatalf("hits a1=%d a2=%d b1=%d b2=%d, want 20/20/0/0: all calls in the local zone",
			a1.hits.Load(), a2.hits.Load(), b1.hits.Load(), b2.hits.Load())
	}
	a1.Close()
	a2.Close()
	for i := 0; tr.Status().Ejections == 0 || !tr.Status().PanicMode; i++ {
		if i == 10 {
			t.Fatalf("no ejection after 10 calls: %v\n%s", tr.Status(), logs)
		}
		if _, err := attempt(tr); err != nil {
			t.Fatalf("GET %d after zone a died: %v", i, err)
		}
	}
	for i := range 40 {
		out, err := attempt(tr)
		if err != nil {
			t.Fatalf("GET %d after the first ejection: %v", i, err)
		}
		if out.Attempts != 1 || (out.Addr != b1.addr() && out.Addr != b2.addr()) {
			t.Fatalf("GET %d after the first ejection: %+v, want one attempt in zone b", i, out)
		}
	}
	if s := tr.Status(); s.Failures != 0 {
		t.Errorf("status %v: want 0 failures", s)
	}
}

// With Strict, a consumer never leaves its zone: once the local zone's
// instances are gone, calls fail with ErrZoneUnavailable and zone b serves
// nothing.
func TestZoneStrictFailsClearly(t *testing.T) {
	a1, a2, b1 := newBackend(t, "a1", nil), newBackend(t, "a2", nil), newBackend(t, "b1", nil)
	src := zoned(t, map[*backend]string{a1: "a", a2: "a", b1: "b"})
	_, tr, _ := newClient(t, src, consumer.WatcherOptions{}, consumer.Options{
		Zones:   consumer.Zones{Local: "a", Strict: true},
		Outlier: consumer.OutlierDetection{BaseEjectionTime: time.Minute},
	})
	for i := range 10 {
		if _, err := do(tr, "GET", ""); err != nil {
			t.Fatalf("GET %d: %v", i, err)
		}
	}
	a1.Close()
	a2.Close()
	for i := range 10 {
		if _, err := attempt(tr); !errors.Is(err, consumer.ErrZoneUnavailable) {
			t.Fatalf("GET %d with zone a gone: %v, want ErrZoneUnavailable", i, err)
		}
	}
	if b1.hits.Load() != 0 {
		t.Errorf("zone b served %d calls, want 0 (Strict)", b1.hits.Load())
	}
	// A consumer in a zone the view does not list fails the same way.
	_, tr2, _ := newClient(t, src, consumer.WatcherOptions{}, consumer.Options{Zones: consumer.Zones{Local: "c", Strict: true}})
	if _, err := attempt(tr2); !errors.Is(err, consumer.ErrZoneUnavailable) {
		t.Errorf("GET from zone c: %v, want ErrZoneUnavailable", err)
	}
}

// Below MinClusterSize, or with the local zone absent from the view, every
// instance is a candidate alike.
func TestZoneAwareOffForSmallViews(t *testing.T) {
	a1, b1 := newBackend(t, "a1", nil), newBackend(t, "b1", nil)
	src := zoned(t, map[*backend]string{a1: "a", b1: "b"})
	_, tr, _ := newClient(t, src, consumer.WatcherOptions{}, consumer.Options{Zones: consumer.Zones{Local: "a"}})
	for range 10 {
		do(tr, "GET", "")
	}
	if a1.hits.Load() != 5 || b1.hits.Load() != 5 {
		t.Errorf("hits a1=%d b1=%d, want 5/5 (2 instances < MinClusterSize 6)", a1.hits.Load(), b1.hits.Load())
	}
}

// Two zones of two instances, the consumer in zone a: the spill is
// proportional (Envoy's zone-aware routing). While a is healthy every call
// stays in it; with one of a's ejected, a keeps (1/3)/(1/2) = 2/3 of the
// calls and only the deficit, a third, goes to b; with both of a's down
// (one ejected, the other's ejection refused by the per-zone cap: panic
// mode in zone a), everything goes to b, each call in one attempt. The
// ejection and the panic mode are counted with zone a.
func TestZoneSpillIsProportional(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	a1, a2, b1, b2 := newBackend(t, "a1", nil), newBackend(t, "a2", nil), newBackend(t, "b1", nil), newBackend(t, "b2", nil)
	src := zoned(t, map[*backend]string{a1: "a", a2: "a", b1: "b", b2: "b"})
	_, tr, logs := newClient(t, src, consumer.WatcherOptions{}, consumer.Options{
		Zones:         consumer.Zones{Local: "a", MinClusterSize: 4},
		Outlier:       consumer.OutlierDetection{BaseEjectionTime: time.Minute},
		MeterProvider: mp,
	})
	hits := func() (a1n, a2n, bn int64) { return a1.hits.Load(), a2.hits.Load(), b1.hits.Load() + b2.hits.Load() }
	for i := range 40 {
		if _, err := attempt(tr); err != nil {
			t.Fatalf("GET %d: %v", i, err)
		}
	}
	if x1, x2, xb := hits(); x1 != 20 || x2 != 20 || xb != 0 {
		t.Fatalf("healthy zone a: hits a1=%d a2=%d b=%d, want 20/20/0", x1, x2, xb)
	}

	a1.Close()
	for i := 0; tr.Status().Ejections == 0; i++ {
		if i == 10 {
			t.Fatalf("a1 not ejected after 10 calls: %v\n%s", tr.Status(), logs)
		}
		if _, err := attempt(tr); err != nil {
			t.Fatalf("GET %d after a1 died: %v", i, err)
		}
	}
	_, a2From, bFrom := hits()
	for i := range 300 { // a multiple of the split's period, (1+2)*2 = 6 calls
		if out, err := attempt(tr); err != nil || out.Attempts != 1 {
			t.Fatalf("GET %d with a1 ejected: %+v %v, want one attempt", i, out, err)
		}
	}
	if _, x2, xb := hits(); x2-a2From != 200 || xb-bFrom != 100 {
		t.Fatalf("a1 ejected: a2 served %d and zone b %d of 300 calls, want 200 and 100 (only the deficit spills)", x2-a2From, xb-bFrom)
	}

	a2.Close()
	for i := 0; !tr.Status().PanicMode; i++ {
		if i == 20 {
			t.Fatalf("zone a not in panic mode after 20 calls: %v\n%s", tr.Status(), logs)
		}
		if _, err := attempt(tr); err != nil {
			t.Fatalf("GET %d after a2 died: %v", i, err)
		}
	}
	for i := range 40 {
		out, err := attempt(tr)
		if err != nil || out.Attempts != 1 || (out.Addr != b1.addr() && out.Addr != b2.addr()) {
			t.Fatalf("GET %d with zone a down: %+v %v, want one attempt in zone b", i, out, err)
		}
	}
	ms := metricsOf(t, reader)
	za := attribute.String("drainkit.zone", "a")
	if e, p := sum(ms[consumer.MetricEjections], za), sum(ms[consumer.MetricPanicEntries], za); e != 1 || p != 1 {
		t.Errorf("zone a: %d ejections, %d panic mode entries; want 1 and 1 (the cap of 50 %% counts per zone: 1 of 2)", e, p)
	}
	if s := tr.Status(); s.Failures != 0 || s.Ejections != 1 {
		t.Errorf("status %v: want no failure and 1 ejection", s)
	}
}

// zoneView is a view of revision rev listing bs, each in the zone zones
// gives it under the "zone" metadata key.
func zoneView(rev uint64, zones map[*backend]string, bs ...*backend) registry.View {
	ins := []registry.Instance{}
	for _, b := range bs {
		in := b.instance()
		in.Meta = map[string]string{"zone": zones[b]}
		ins = append(ins, in)
	}
	return registry.View{Service: "orders", Instances: ins, Revision: rev, Received: time.Now(), Source: "feed"}
}

// Issue 30 item 8: instances that leave the registry count as missing from
// their zone for Zones.PeakWindow. Five instances in each of two zones, the
// consumer in zone a: while all are listed every call stays in a; once
// three of a's five leave the view (not ejected: gone), zone a is judged by
// the five it had, not as a zone of two that needs less: it needs 5/10 of
// the healthy instances and has 2/7, so it keeps (2/7)/(5/10) = 4/7 of the
// calls and 3/7 spill to b, and each remaining instance of a takes the
// load of one instance (2/7 of a's calls, as each of b's five takes (1 +
// 3/7)/5 = 2/7 of a zone's calls), not 2.5 times as much.
func TestZoneSpillCountsInstancesThatLeft(t *testing.T) {
	zones := map[*backend]string{}
	var as, bs []*backend
	for i := range 5 {
		a, b := newBackend(t, fmt.Sprintf("a%d", i), nil), newBackend(t, fmt.Sprintf("b%d", i), nil)
		zones[a], zones[b] = "a", "b"
		as, bs = append(as, a), append(bs, b)
	}
	f := newFeed()
	f.ch <- zoneView(1, zones, append(as, bs...)...)
	_, tr, logs := newClient(t, f, consumer.WatcherOptions{FullReadInterval: -1}, consumer.Options{Zones: consumer.Zones{Local: "a"}})
	hits := func(bs []*backend) (n int64) {
		for _, b := range bs {
			n += b.hits.Load()
		}
		return n
	}
	for i := range 100 {
		if _, err := attempt(tr); err != nil {
			t.Fatalf("GET %d: %v", i, err)
		}
	}
	if ha, hb := hits(as), hits(bs); ha != 100 || hb != 0 {
		t.Fatalf("5+5 listed: zone a served %d and b %d of 100 calls, want 100 and 0", ha, hb)
	}

	f.ch <- zoneView(2, zones, append(as[3:], bs...)...) // a0, a1, a2 left the registry
	eventually(t, 5*time.Second, "the view without a0-a2", func() bool { return len(tr.Instances()) == 7 })
	left, fromA, fromB := hits(as[:3]), hits(as[3:]), hits(bs)
	const calls = 350 // a multiple of the split's period, (2+5)*5 = 35 calls
	for i := range calls {
		if out, err := attempt(tr); err != nil || out.Attempts != 1 {
			t.Fatalf("GET %d with a0-a2 gone: %+v %v, want one attempt", i, out, err)
		}
	}
	ha, hb := hits(as[3:])-fromA, hits(bs)-fromB
	t.Logf("a0-a2 gone: zone a (2 instances) served %d, zone b (5) %d of %d calls: %.1f %% spilled, %.2f calls per instance of a",
		ha, hb, calls, 100*float64(hb)/calls, float64(ha)/2)
	if hits(as[:3]) != left || ha != calls*4/7 || hb != calls*3/7 {
		t.Fatalf("a0-a2 gone: zone a served %d and b %d of %d calls, want %d and %d (a keeps (2/7)/(5/10) = 4/7)",
			ha, hb, calls, calls*4/7, calls*3/7)
	}
	if !strings.Contains(logs.String(), "judging its share of the traffic by its former size") ||
		!strings.Contains(logs.String(), "instances=2 had=5") {
		t.Errorf("the local zone's loss was not logged with its counts:\n%s", logs)
	}
	if s := tr.Status(); s.Failures != 0 || s.Ejections != 0 {
		t.Errorf("status %v: want no failure and no ejection", s)
	}
}
