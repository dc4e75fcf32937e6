package natsdrain_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/workdrain/natsdrain"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A replica is this test binary started again with envChild set: a worker
// consuming the shared consumer, written the way a service would be, in one
// of two strategies:
//
//   - "drainkit": natsdrain under drainkit.Main (no propagation window: a
//     pure worker), stopping at t0;
//   - "plain": the usual hand-written consumer, jetstream's Consume with a
//     goroutine per message, and on SIGTERM a plain Stop and Close.
//
// Each replica records what its handler did in its events file, one line
// per event, written straight to the file (no buffer a kill could lose):
// "B id" when it began a message, "D id" when it finished it, "X id" when
// its context was cancelled first. The parent reads every file at the end.
const (
	envChild  = "NATSDRAIN_TEST_REPLICA" // "drainkit" or "plain"
	envURL    = "NATSDRAIN_TEST_URL"
	envEvents = "NATSDRAIN_TEST_EVENTS"
	envStuck  = "NATSDRAIN_TEST_STUCK" // a message id whose handler ignores cancellation
)

// concurrency per replica: 300 msg/s x 275 ms average is 83 messages in
// flight, so two replicas (one is always restarting) cover it with room.
const concurrency = 64

// workFor is a message's processing time, 50 to 500 ms, fixed by its id so
// every run and every replica agrees.
func workFor(id string) time.Duration {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return 50*time.Millisecond + time.Duration(h.Sum32()%451)*time.Millisecond
}

type events struct {
	mu sync.Mutex
	f  *os.File
}

func (e *events) write(kind, id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, _ = e.f.WriteString(kind + " " + id + "\n")
}

// handler simulates work with side effects: it begins, works for
// workFor(id), then finishes, unless its context ends first. The stuck id
// ignores its context and never finishes.
func handler(ev *events, stuck string) func(ctx context.Context, id string) error {
	return func(ctx context.Context, id string) error {
		ev.write("B", id)
		if id == stuck {
			select {} // ignores cancellation; the process's exit ends it
		}
		t := time.NewTimer(workFor(id))
		defer t.Stop()
		select {
		case <-t.C:
			ev.write("D", id)
			return nil
		case <-ctx.Done():
			ev.write("X", id)
			return context.Cause(ctx)
		}
	}
}

func replicaMain(mode string) int {
	f, err := os.OpenFile(os.Getenv(envEvents), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer f.Close()
	handle := handler(&events{f: f}, os.Getenv(envStuck))
	nc, err := nats.Connect(os.Getenv(envURL))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	js, err := jetstream.New(nc)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	cons, err := js.Consumer(ctx, streamName, consumerName)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if mode == "plain" {
		return plainReplica(nc, cons, handle)
	}
	w, err := natsdrain.New(natsdrain.Config{
		Consumer:    cons,
		Concurrency: concurrency,
		Conn:        nc,
		Handler: func(ctx context.Context, msg jetstream.Msg) error {
			return handle(ctx, string(msg.Data()))
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return drainkit.Run(context.Background(), []string{"--admin-addr=127.0.0.1:0"},
		drainkit.WithWorker("nats", w), drainkit.WithObserver(readyLine{}))
}

// readyLine prints "ready" on stdout when the replica is READY: its worker
// is pulling.
type readyLine struct{}

func (readyLine) OnTransition(t lifecycle.Transition) {
	if t.To == lifecycle.Ready {
		fmt.Println("ready")
	}
}
func (readyLine) OnDrainStep(lifecycle.Timeline, lifecycle.Step) {}

// plainReplica is the common hand-written consumer: messages handled on
// their own goroutines, a plain Stop and Close on SIGTERM.
func plainReplica(nc *nats.Conn, cons jetstream.Consumer, handle func(context.Context, string) error) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	sem := make(chan struct{}, concurrency)
	cc, err := cons.Consume(func(msg jetstream.Msg) {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			if handle(ctx, string(msg.Data())) == nil {
				_ = msg.Ack()
			} else {
				_ = msg.Nak()
			}
		}()
	}, jetstream.PullMaxMessages(concurrency))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("ready")
	<-ctx.Done()
	cc.Stop()
	nc.Close()
	return 0
}

// replica is one running child process.
type replica struct {
	name   string
	cmd    *exec.Cmd
	events string
	stderr *lockedBuffer
	ready  chan struct{}
	exited chan struct{}
	code   int
}

type lockedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

// startReplica starts a replica and waits until it is ready (60s at most).
func startReplica(t *testing.T, name, mode, url, dir string, env ...string) *replica {
	t.Helper()
	r := &replica{name: name, events: dir + "/" + name + ".events", stderr: &lockedBuffer{},
		ready: make(chan struct{}), exited: make(chan struct{})}
	r.cmd = exec.Command(os.Args[0], "-test.run=^$")
	r.cmd.Env = append(os.Environ(), envChild+"="+mode, envURL+"="+url, envEvents+"="+r.events,
		"DRAINKIT_PROPAGATION_MIN=0s", "DRAINKIT_PROPAGATION_QUIET=0s", "DRAINKIT_PROPAGATION_MAX=0s")
	r.cmd.Env = append(r.cmd.Env, env...)
	r.cmd.Stderr = r.stderr
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		once := sync.Once{}
		for sc.Scan() {
			if sc.Text() == "ready" {
				once.Do(func() { close(r.ready) })
			}
		}
		err := r.cmd.Wait()
		r.code = r.cmd.ProcessState.ExitCode()
		if err != nil && r.code == 0 {
			r.code = -1
		}
		close(r.exited)
	}()
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		<-r.exited
	})
	select {
	case <-r.ready:
	case <-r.exited:
		t.Fatalf("replica %s exited %d before ready: %s", name, r.code, r.stderr)
	case <-time.After(60 * time.Second):
		t.Fatalf("replica %s not ready within 60s: %s", name, r.stderr)
	}
	return r
}

// stop sends SIGTERM and waits for the exit (60s at most), returning its
// code.
func (r *replica) stop(t *testing.T) int {
	t.Helper()
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
		return r.code
	case <-time.After(60 * time.Second):
		t.Fatalf("replica %s did not exit within 60s after SIGTERM: %s", r.name, r.stderr)
		return -1
	}
}

// tally is what the replicas' handlers did, over all event files.
type tally struct {
	Published      int
	Processed      int // distinct messages finished
	ProcessedTwice int // messages begun more than once: their side effects ran again
	Lost           int // published, never finished
	CutInFlight    int // begun by a replica that never finished them
}

func (tl tally) String() string {
	return fmt.Sprintf("published %d, processed %d, processed twice %d, lost %d, in flight when cut %d",
		tl.Published, tl.Processed, tl.ProcessedTwice, tl.Lost, tl.CutInFlight)
}

func count(t *testing.T, published int, files []string) tally {
	t.Helper()
	begun, done := map[string]int{}, map[string]int{}
	tl := tally{Published: published}
	for _, name := range files {
		f, err := os.Open(name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		mine := map[string]bool{}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var kind, id string
			if _, err := fmt.Sscan(sc.Text(), &kind, &id); err != nil {
				t.Fatalf("%s: bad line %q", name, sc.Text())
			}
			switch kind {
			case "B":
				begun[id]++
				mine[id] = true
			case "D":
				done[id]++
				delete(mine, id)
			}
		}
		f.Close()
		tl.CutInFlight += len(mine)
	}
	for i := range published {
		id := strconv.Itoa(i)
		if done[id] > 0 {
			tl.Processed++
		} else {
			tl.Lost++
		}
		if begun[id] > 1 {
			tl.ProcessedTwice++
		}
	}
	return tl
}

// publish publishes ids 0..n-1 as "work.<id>" at rate per second on a fixed
// schedule (a late publish catches up, it does not shift the rest).
func publish(js jetstream.JetStream, n int, rate float64) error {
	start := time.Now()
	for i := range n {
		if d := time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second)))); d > 0 {
			time.Sleep(d) // the load's schedule, not synchronisation
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := js.Publish(ctx, "work."+strconv.Itoa(i), []byte(strconv.Itoa(i)))
		cancel()
		if err != nil {
			return fmt.Errorf("publish %d: %w", i, err)
		}
	}
	return nil
}
