package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/childtest"
	"github.com/drainkit/drainkit/registry/consul/consultest"
)

type statusJSON struct {
	Requests     int     `json:"requests"`
	Failures     int     `json:"failures"`
	Instances    int     `json:"instances"`
	Staleness    float64 `json:"staleness_ns"`
	Revision     uint64  `json:"revision"`
	Degraded     bool    `json:"degraded"`
	Source       string  `json:"source"`
	Snapshot     string  `json:"snapshot"`
	Age          float64 `json:"age_ns"`
	Ejections    int     `json:"ejections"`
	WrongService int     `json:"wrong_service"`
	PanicMode    bool    `json:"panic_mode"`
	Candidates   []struct {
		Addr    string `json:"addr"`
		Ejected bool   `json:"ejected"`
	} `json:"candidates"`
}

func readStatus(t *testing.T, c *childtest.Child) statusJSON {
	t.Helper()
	resp, err := c.Client.Get("http://" + c.Admin + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s statusJSON
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s statusJSON) lists(addr string) bool {
	return slices.ContainsFunc(s.Candidates, func(c struct {
		Addr    string `json:"addr"`
		Ejected bool   `json:"ejected"`
	}) bool {
		return c.Addr == addr
	})
}

// The Consul agent stops in the middle of a rolling restart: the consumer
// keeps serving from its last view (0 failed while replicas of that view
// still serve), its staleness grows, and when a fresh agent returns the
// replicas that register there are picked up.
func TestConsulAgentStoppedMidRollingRestart(t *testing.T) {
	agent := consultest.Start(t)
	env := append(agent.Env(), "DRAINKIT_PROPAGATION_MIN=1s", "DRAINKIT_REGISTRY_TTL=3s")
	svc := []string{"--service", "orders"}
	r1 := childtest.Start(t, serviceBin, env, svc...)
	r2 := childtest.Start(t, serviceBin, env, svc...)
	c := childtest.Start(t, consumerBin, agent.Env(), svc...)
	waitFor(t, 20*time.Second, "the consumer lists r1 and r2", func() bool {
		s := readStatus(t, c)
		return s.lists(r1.HTTP) && s.lists(r2.HTTP)
	})

	stopLoad := load(t, c)

	// Rolling restart, step 1: r3 joins, then the agent goes away.
	r3 := childtest.Start(t, serviceBin, env, svc...)
	waitFor(t, 20*time.Second, "the consumer lists r3", func() bool { return readStatus(t, c).lists(r3.HTTP) })
	agent.Stop()
	waitFor(t, 20*time.Second, "staleness reported", func() bool { return readStatus(t, c).Staleness > 0 })

	// Step 2 without the registry: r1 drains (it cannot deregister) and exits.
	r1.Signal(syscall.SIGTERM)
	if code := r1.WaitExit(30 * time.Second); code != 0 {
		t.Errorf("r1 exit code %d", code)
	}
	s1 := readStatus(t, c)
	time.Sleep(500 * time.Millisecond) // the age to grow by
	s2 := readStatus(t, c)
	if s2.Staleness <= s1.Staleness || s2.Instances != 3 {
		t.Errorf("staleness %v then %v, %d instances: want growing staleness and the last view kept", s1.Staleness, s2.Staleness, s2.Instances)
	}
	r4 := childtest.Start(t, serviceBin, env, svc...)

	// The agent returns (fresh, empty): the replicas register again and
	// the consumer picks up r4 without waiting for a drain or a restart.
	back := time.Now()
	agent.Restart(t)
	waitFor(t, 30*time.Second, "the consumer lists r4", func() bool { return readStatus(t, c).lists(r4.HTTP) })
	t.Logf("r4 listed %v after the agent returned", time.Since(back).Round(time.Millisecond))
	if s := readStatus(t, c); s.Staleness != 0 {
		t.Errorf("staleness %v after the agent returned, want 0", s.Staleness)
	}
	time.Sleep(time.Second) // load on the new view
	if sent, failed := stopLoad(); failed != 0 || sent < 100 {
		t.Errorf("%d of %d requests failed, want 0 of at least 100", failed, sent)
	}
}

// load sends GET / through the consumer c every 10ms until stop is called or
// the test ends, failing the test for each request that does not get 200;
// stop waits for the request in flight and returns how many were sent and
// how many failed.
func load(t *testing.T, c *childtest.Child) (stop func() (sent, failed int64)) {
	var sentN, failedN atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond): // load pacing
			}
			sentN.Add(1)
			resp, err := c.Client.Get("http://" + c.HTTP + "/")
			if err == nil {
				resp.Body.Close()
			}
			if err != nil || resp.StatusCode != http.StatusOK {
				failedN.Add(1)
				t.Errorf("request through the consumer failed: %v %v", err, resp)
			}
		}
	})
	var once sync.Once
	stop = func() (int64, int64) {
		once.Do(func() { close(done); wg.Wait() })
		return sentN.Load(), failedN.Load()
	}
	t.Cleanup(func() { stop() })
	return stop
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(50 * time.Millisecond) // polling interval
	}
}
