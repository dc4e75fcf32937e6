package drill

import (
	"bufio"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/consumer"
)

// TestOutageProxyCutsAndRestores: the proxy forwards until cut, then
// resets the open connection and every new one, and forwards again once
// restored.
func TestOutageProxyCutsAndRestores(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	defer func() { _ = echo.Close(); <-done }()
	p, err := newOutageProxy(echo.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	roundTrip := func(c net.Conn) error {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("ping\n")); err != nil {
			return err
		}
		_, err := bufio.NewReader(c).ReadString('\n')
		return err
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := roundTrip(c); err != nil {
		t.Fatalf("before the cut: %v", err)
	}
	p.cut()
	if err := roundTrip(c); err == nil {
		t.Errorf("the open connection still answered after the cut")
	}
	if c2, err := net.Dial("tcp", p.Addr()); err == nil {
		if roundTrip(c2) == nil {
			t.Errorf("a new connection was answered during the outage")
		}
		c2.Close()
	}
	p.restore()
	c3, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if err := roundTrip(c3); err != nil {
		t.Errorf("after the restore: %v", err)
	}
}

// TestLateConsumersVerdict: a registry-outage run passes only when the
// consumer started with a snapshot served it without a failure and the one
// without failed every call for want of a view; a no-snapshot consumer that
// got answers means the registry was reachable, and fails the run.
func TestLateConsumersVerdict(t *testing.T) {
	noView := "the consumer's view of the service is empty: " + consumer.ErrNoInstance.Error()
	good := []LateConsumer{
		{Snapshot: true, Served: "/tmp/x/last-good.json", Age: time.Second, Requests: 20},
		{Requests: 2, Failed: 2, Err: noView, Age: -1},
	}
	for _, tc := range []struct {
		name string
		edit func(lcs []LateConsumer)
		ok   bool
	}{
		{"as configured", func([]LateConsumer) {}, true},
		{"snapshot not served", func(l []LateConsumer) { l[0].Served = "" }, false},
		{"snapshot consumer failed", func(l []LateConsumer) { l[0].Failed, l[0].Err = 1, "reset" }, false},
		{"registry reachable", func(l []LateConsumer) { l[1].Failed, l[1].Err = 0, "" }, false},
		{"failed for another reason", func(l []LateConsumer) { l[1].Err = "connection refused" }, false},
		{"no calls", func(l []LateConsumer) { l[1].Requests, l[1].Failed = 0, 0 }, false},
	} {
		lcs := slices.Clone(good)
		tc.edit(lcs)
		run := StrategyRun{OutageStart: time.Second, OutageEnd: 3 * time.Second, LateConsumers: lcs}
		v := outageVerdict("PASS: 0 of 10 requests failed", run)
		if lateConsumersOK(lcs) != tc.ok || strings.HasPrefix(v, "FAIL") == tc.ok {
			t.Errorf("%s: ok %v, verdict %q: want ok %v", tc.name, lateConsumersOK(lcs), v, tc.ok)
		}
		if tc.ok && (!strings.Contains(v, "served it (last-good.json, 1.00s old): 0 of 20 calls failed") || !strings.Contains(v, "2 of 2 calls failed, each at its deadline")) {
			t.Errorf("verdict %q", v)
		}
		// Summarize: the run passes only as the late consumers do, and the
		// JSON lists them.
		fix := newRunFixture(ScenarioOutage, StrategyDrainkit).requests(1, OK, "", 500*time.Millisecond, 2*time.Second)
		fix.Run.OutageStart, fix.Run.OutageEnd, fix.Run.LateConsumers = time.Second, 3*time.Second, lcs
		sum := fix.summary(Config{})
		if sum.Pass != tc.ok || len(sum.LateConsumers) != 2 || (sum.LateConsumers[0].SnapshotAgeSeconds == nil) != (lcs[0].Served == "") {
			t.Errorf("%s: summary pass %v, late consumers %+v, verdict %q", tc.name, sum.Pass, sum.LateConsumers, sum.Verdict)
		}
	}
}
