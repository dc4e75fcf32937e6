package main

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/drill"
	"github.com/drainkit/drainkit/internal/nacostest"
	"github.com/drainkit/drainkit/internal/toolbin"
)

// What the package's tests share: the machine's capacity for drills that
// run in parallel, and one Nacos server.

// drillCapacity is the load, in requests per second, that the drills of
// tests running at once may send together: a third of what the machine
// drives (drill.CoreRate per core, for load generator, consumers and
// replicas together), leaving the rest to the replicas' bursts, the tests'
// own servers and Chromium, and the other packages `make test` runs beside
// this one. On 2 cores: 1,000 requests/s, e.g. a 600/s and a 300/s drill.
var drillCapacity = int64(max(1, runtime.NumCPU()*drill.CoreRate/3))

// drillLoad holds the load of the drills running now (drillCapacity in all).
var drillLoad = semaphore.NewWeighted(drillCapacity)

// parallelDrill runs t in parallel with the package's other parallel tests
// (as many at once as go test's -parallel, GOMAXPROCS by default). A test
// whose drills send rate requests per second (0: none, it starts no drill)
// first waits until that fits drillCapacity beside the drills running, and
// holds it until it ends; a rate above it runs alone. Where the machine
// does not allow it, a drill runs alone too: when, as it is about to start,
// the machine already has more runnable work than cores (machineBusy), a
// second drill beside it would only make both invalid (the load falling
// behind its schedule). Tests that load the machine otherwise stay
// sequential, before every parallel one: those that start Nacos (a JVM that
// takes the cores for a minute: sharedNacos), build programs
// (readme_test.go), or overload it on purpose (TestDrillOverloadIsInvalid).
func parallelDrill(t *testing.T, rate int64) {
	t.Helper()
	t.Parallel()
	if rate == 0 {
		return
	}
	w := min(rate, drillCapacity)
	if busy, load := machineBusy(); busy {
		t.Logf("load average %.1f on %d cores: this test's drills run alone", load, runtime.NumCPU())
		w = drillCapacity
	}
	if err := drillLoad.Acquire(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drillLoad.Release(w) })
}

// machineBusy reports whether the machine has more runnable work than cores
// (the 1-minute load average of /proc/loadavg above runtime.NumCPU), and
// the load average; false where it cannot be read.
func machineBusy() (bool, float64) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return false, 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return false, 0
	}
	load, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return false, 0
	}
	return load > float64(runtime.NumCPU()), load
}

// sharedRuns are the drill runs that more than one test judges, by command
// line and environment (sharedDrainkit).
var sharedRuns struct {
	mu   sync.Mutex
	runs map[string]*sharedRun
}

// sharedRun is one run of sharedRuns: done once, by the first test that
// asks for it.
type sharedRun struct {
	once sync.Once
	r    result
	ran  bool // the run completed (drainkit returned)
}

// sharedDrainkit is drainkit for a run that several tests judge, each for a
// reason of its own: the run of env and args happens once in the package,
// in the first test that asks (bounded by timeout), and every later call
// with the same env and args returns that run's result instead of running
// it again. The run is as good as a test's own: each test still checks all
// it checks of it (a second run would only cost its whole time again). A
// test sharing a run that did not complete fails, naming the run.
func sharedDrainkit(t *testing.T, timeout time.Duration, env []string, args ...string) result {
	t.Helper()
	key := strings.Join(env, "\x00") + "\x01" + strings.Join(args, "\x00")
	sharedRuns.mu.Lock()
	if sharedRuns.runs == nil {
		sharedRuns.runs = map[string]*sharedRun{}
	}
	s := sharedRuns.runs[key]
	if s == nil {
		s = &sharedRun{}
		sharedRuns.runs[key] = s
	}
	sharedRuns.mu.Unlock()
	s.once.Do(func() {
		s.r = drainkit(t, timeout, env, args...)
		s.ran = true
	})
	if !s.ran {
		t.Fatalf("drainkit %v (env %v): the shared run did not complete in the test that ran it", args, env)
	}
	return s.r
}

// nacosServer is the package's one Nacos server, started by the first test that
// needs it (a start takes 30 s to 2 minutes on 2 cores: three tests used to
// start one each) and stopped after the tests (stopsShared). Its tests use
// service names of their own.
var nacosServer struct {
	once sync.Once
	s    *nacostest.Server
	stop func()
	skip string
	err  error
}

// sharedNacos returns the package's Nacos server, starting it on the first
// call; it skips t (or fails it under `make test` and CI) when the server's
// jar is missing, as nacostest.Start does. A failed test gets the server
// log's tail.
func sharedNacos(t *testing.T) *nacostest.Server {
	t.Helper()
	nacosServer.once.Do(func() { nacosServer.s, nacosServer.stop, nacosServer.skip, nacosServer.err = nacostest.StartMain() })
	if nacosServer.skip != "" {
		t.Skip(nacosServer.skip)
	}
	if nacosServer.err != nil {
		t.Fatal(nacosServer.err)
	}
	t.Cleanup(func() { toolbin.LogTail(t, nacosServer.s.LogPath(), "nacos log") })
	return nacosServer.s
}

// stopsShared is the package's testing.M for goleak: its Run stops the
// shared Nacos server, if one was started, once the tests have run, so
// that goleak sees none of its goroutines.
type stopsShared struct{ m *testing.M }

func (s stopsShared) Run() int {
	code := s.m.Run()
	if nacosServer.stop != nil {
		nacosServer.stop()
	}
	return code
}
