// Package workerdrill runs natsdrain's rolling-restart drill: a real
// nats-server with JetStream embedded in the calling process, worker
// replicas as child processes of a given executable, a known set of
// messages published at a steady rate while every replica is restarted, and
// a tally of what the replicas' handlers did. The natsdrain tests (the
// acceptance) and the natsdrill command share it.
package workerdrill

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/workdrain/natsdrain"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A replica is the executable started again with EnvReplica set: a worker
// consuming the shared consumer, written the way a service would be, in one
// of two strategies:
//
//   - StrategyDrainkit: natsdrain under drainkit.Main (no propagation
//     window: a pure worker), stopping at t0;
//   - StrategyPlain: the usual hand-written consumer, jetstream's Consume
//     with a goroutine per message, and on SIGTERM a plain Stop and Close.
//
// Each replica records what its handler did in its events file, one line
// per event, written straight to the file (no buffer a kill could lose):
// "B id" when it began a message, "D id" when it finished it, "X id" when
// its context was cancelled first.
const (
	EnvReplica = "NATSDRAIN_DRILL_REPLICA" // the strategy
	EnvURL     = "NATSDRAIN_DRILL_URL"
	EnvEvents  = "NATSDRAIN_DRILL_EVENTS"
	EnvStuck   = "NATSDRAIN_DRILL_STUCK" // a message id whose handler ignores cancellation

	StrategyDrainkit = "drainkit"
	StrategyPlain    = "plain"
)

// Stream and Consumer are the drill's stream and durable pull consumer.
const (
	Stream   = "WORK"
	Consumer = "workers"
)

// Concurrency per replica: 300 msg/s x 275 ms average is 83 messages in
// flight, so two replicas (one is always restarting) cover it with room.
const Concurrency = 64

// WorkFor is a message's processing time, 50 to 500 ms, fixed by its id so
// every run and every replica agrees.
func WorkFor(id string) time.Duration {
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
// WorkFor(id), then finishes, unless its context ends first. The stuck id
// ignores its context and never finishes.
func handler(ev *events, stuck string) func(ctx context.Context, id string) error {
	return func(ctx context.Context, id string) error {
		ev.write("B", id)
		if id == stuck {
			select {} // ignores cancellation; the process's exit ends it
		}
		t := time.NewTimer(WorkFor(id))
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

// ExitIfReplica runs a replica and exits with its code when this process
// was started as one (EnvReplica set), else returns at once: the first
// call of the drill's main and of the tests' TestMain.
func ExitIfReplica() {
	if strategy := os.Getenv(EnvReplica); strategy != "" {
		os.Exit(replicaMain(strategy))
	}
}

// replicaMain runs a replica of the strategy from the environment and
// returns its exit code; it prints "ready" on stdout once it consumes.
func replicaMain(strategy string) int {
	f, err := os.OpenFile(os.Getenv(EnvEvents), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer f.Close()
	handle := handler(&events{f: f}, os.Getenv(EnvStuck))
	nc, err := nats.Connect(os.Getenv(EnvURL))
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
	cons, err := js.Consumer(ctx, Stream, Consumer)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if strategy == StrategyPlain {
		return plainReplica(nc, cons, handle)
	}
	w, err := natsdrain.New(natsdrain.Config{
		Consumer:    cons,
		Concurrency: Concurrency,
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
	sem := make(chan struct{}, Concurrency)
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
	}, jetstream.PullMaxMessages(Concurrency))
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
