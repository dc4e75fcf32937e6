package main

import (
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/childtest"
)

// upstream sends GET / through the consumer and returns the status and the
// instance that answered.
func upstream(t *testing.T, c *childtest.Child) (int, string, string) {
	t.Helper()
	resp, err := c.Client.Get("http://" + c.HTTP + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Drainkit-Upstream"), string(b)
}

// Two zones of two httpservice processes, the consumer in zone a: every
// call goes to a while a is healthy; once one of a's is killed (kill -9)
// and ejected, a keeps two thirds of the calls and only the deficit, a
// third, spills to b; once the other is killed too, calls go to b as soon
// as it is found failing, and none fails. A consumer told to stay in its
// zone fails them instead, saying so.
func TestZoneSpillAfterLocalZoneKilled(t *testing.T) {
	var rs []*childtest.Child
	for range 4 {
		rs = append(rs, childtest.Start(t, serviceBin, nil))
	}
	list := rs[0].HTTP + "@a," + rs[1].HTTP + "@a," + rs[2].HTTP + "@b," + rs[3].HTTP + "@b"
	c := childtest.Start(t, consumerBin, nil, "--targets", list, "--zone", "a", "--zone-min-size", "4")
	strict := childtest.Start(t, consumerBin, nil, "--targets", list, "--zone", "a", "--zone-strict")
	zoneA := map[string]bool{rs[0].HTTP: true, rs[1].HTTP: true}
	for i := range 20 {
		for _, cc := range []*childtest.Child{c, strict} {
			if code, up, body := upstream(t, cc); code != http.StatusOK || !zoneA[up] {
				t.Fatalf("call %d: %d from %q (%s), want 200 from zone a", i, code, up, body)
			}
		}
	}
	kill := func(r *childtest.Child) {
		r.Signal(syscall.SIGKILL)
		r.WaitExit(10 * time.Second)
	}
	kill(rs[0])
	for i := 0; readStatus(t, c).Ejections == 0; i++ {
		if i == 10 {
			t.Fatalf("no ejection after 10 calls: %+v", readStatus(t, c))
		}
		if code, _, body := upstream(t, c); code != http.StatusOK {
			t.Fatalf("call %d after %s was killed: %d %s", i, rs[0].HTTP, code, body)
		}
	}
	local := 0
	for i := range 60 {
		code, up, body := upstream(t, c)
		if code != http.StatusOK {
			t.Fatalf("call %d with one of zone a ejected: %d %s", i, code, body)
		}
		if zoneA[up] {
			local++
		}
	}
	// Exactly 40 of 60 unless the ejection (5s) ended meanwhile on a busy
	// machine and a probe took a call.
	if local < 38 || local > 41 {
		t.Errorf("%d of 60 calls stayed in zone a with one of its two ejected, want 40: two thirds (only the deficit spills)", local)
	}
	kill(rs[1])
	for i := 0; !readStatus(t, c).PanicMode; i++ {
		if i == 20 {
			t.Fatalf("zone a's second instance not found failing after 20 calls: %+v", readStatus(t, c))
		}
		if code, _, body := upstream(t, c); code != http.StatusOK {
			t.Fatalf("call %d after zone a was killed: %d %s", i, code, body)
		}
	}
	for i := range 30 {
		if code, up, body := upstream(t, c); code != http.StatusOK || zoneA[up] {
			t.Fatalf("call %d with zone a down: %d from %q (%s), want 200 from zone b", i, code, up, body)
		}
	}
	if s := readStatus(t, c); s.Failures != 0 {
		t.Errorf("status %+v: want 0 failures", s)
	}
	for i := range 5 {
		if code, _, body := upstream(t, strict); code != http.StatusBadGateway || !strings.Contains(body, "local zone") {
			t.Errorf("strict call %d with zone a killed: %d %q, want 502 naming the local zone", i, code, body)
		}
	}
	for _, p := range []*childtest.Child{c, strict, rs[2], rs[3]} {
		p.Signal(syscall.SIGTERM)
		p.WaitExit(30 * time.Second)
	}
}
