package workerdrill

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NATS is a real nats-server with JetStream, embedded in this process on a
// loopback port, with the drill's stream and consumer.
type NATS struct {
	Server *server.Server
	JS     jetstream.JetStream
	nc     *nats.Conn
}

// StartNATS starts the server with its store under dir and creates the
// stream and the durable pull consumer (explicit acks, the given AckWait).
func StartNATS(dir string, ackWait time.Duration) (*NATS, error) {
	s, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true,
	})
	if err != nil {
		return nil, err
	}
	s.Start()
	n := &NATS{Server: s}
	if !s.ReadyForConnections(10 * time.Second) {
		n.Close()
		return nil, errors.New("nats-server not ready within 10s")
	}
	if n.nc, err = nats.Connect(s.ClientURL()); err == nil {
		n.JS, err = jetstream.New(n.nc)
	}
	if err != nil {
		n.Close()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err = n.JS.CreateStream(ctx, jetstream.StreamConfig{Name: Stream, Subjects: []string{"work.>"}}); err == nil {
		_, err = n.JS.CreateOrUpdateConsumer(ctx, Stream, jetstream.ConsumerConfig{
			Durable: Consumer, AckPolicy: jetstream.AckExplicitPolicy, AckWait: ackWait, MaxAckPending: 4096,
		})
	}
	if err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

// Close closes the client connection and shuts the server down.
func (n *NATS) Close() {
	if n.nc != nil {
		n.nc.Close()
	}
	n.Server.Shutdown()
	n.Server.WaitForShutdown()
}

// Settled waits until the consumer has nothing left: no message pending
// delivery, none delivered and unacknowledged, none waiting for
// redelivery; or until within has passed (an error with the last info).
func (n *NATS) Settled(within time.Duration) (*jetstream.ConsumerInfo, error) {
	deadline := time.Now().Add(within)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cons, err := n.JS.Consumer(ctx, Stream, Consumer)
		var info *jetstream.ConsumerInfo
		if err == nil {
			info, err = cons.Info(ctx)
		}
		cancel()
		if err == nil && info.NumPending == 0 && info.NumAckPending == 0 && info.NumRedelivered == 0 {
			return info, nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("consumer not settled within %s: %d pending, %d unacknowledged, %d to redeliver",
					within, info.NumPending, info.NumAckPending, info.NumRedelivered)
			}
			return info, err
		}
		<-tick.C
	}
}

// Publish publishes ids 0..n-1 as "work.<id>" at rate per second on a fixed
// schedule (a late publish catches up, it does not shift the rest).
func (n *NATS) Publish(count int, rate float64) error {
	start := time.Now()
	for i := range count {
		if d := time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second)))); d > 0 {
			time.Sleep(d) // the load's schedule, not synchronisation
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := n.JS.Publish(ctx, "work."+strconv.Itoa(i), []byte(strconv.Itoa(i)))
		cancel()
		if err != nil {
			return fmt.Errorf("publish %d: %w", i, err)
		}
	}
	return nil
}

// Replica is one running child process.
type Replica struct {
	Name   string
	Events string // its events file
	cmd    *exec.Cmd
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

// Exec is how to start a replica: the executable and its arguments (the
// test binary with -test.run=^$, or natsdrill itself).
type Exec struct {
	Path string
	Args []string
}

// StartReplica starts a replica of strategy against n, with its events file
// in dir and extra environment (KEY=value), and waits until it is ready
// (60s at most). On error the process is gone.
func (x Exec) StartReplica(n *NATS, name, strategy, dir string, env ...string) (*Replica, error) {
	r := &Replica{Name: name, Events: filepath.Join(dir, name+".events"), stderr: &lockedBuffer{},
		ready: make(chan struct{}), exited: make(chan struct{})}
	r.cmd = exec.Command(x.Path, x.Args...)
	r.cmd.Env = append(os.Environ(), EnvReplica+"="+strategy, EnvURL+"="+n.Server.ClientURL(), EnvEvents+"="+r.Events,
		"DRAINKIT_PROPAGATION_MIN=0s", "DRAINKIT_PROPAGATION_QUIET=0s", "DRAINKIT_PROPAGATION_MAX=0s")
	r.cmd.Env = append(r.cmd.Env, env...)
	r.cmd.Stderr = r.stderr
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := r.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(out)
		var once sync.Once
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
	select {
	case <-r.ready:
		return r, nil
	case <-r.exited:
		return nil, fmt.Errorf("replica %s exited %d before ready: %s", name, r.code, r.stderr)
	case <-time.After(60 * time.Second):
		r.Kill()
		return nil, fmt.Errorf("replica %s not ready within 60s: %s", name, r.stderr)
	}
}

// Stop sends SIGTERM and waits for the exit (60s at most, then it kills
// the replica and returns an error), returning the exit code.
func (r *Replica) Stop() (int, error) {
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
		return r.code, nil
	case <-time.After(60 * time.Second):
		r.Kill()
		return -1, fmt.Errorf("replica %s did not exit within 60s after SIGTERM: %s", r.Name, r.stderr)
	}
}

// Kill kills the replica, if it still runs, and waits for its exit.
func (r *Replica) Kill() {
	_ = r.cmd.Process.Kill()
	<-r.exited
}

// Stderr is what the replica logged so far.
func (r *Replica) Stderr() string { return r.stderr.String() }

// Tally is what the replicas' handlers did, over all event files.
type Tally struct {
	Published      int
	Processed      int // distinct messages finished
	ProcessedTwice int // messages begun more than once: their side effects ran again
	Lost           int // published, never finished
	CutInFlight    int // begun by a replica that never finished them
}

func (tl Tally) String() string {
	return fmt.Sprintf("published %d, processed %d, processed twice %d, lost %d, in flight when cut %d",
		tl.Published, tl.Processed, tl.ProcessedTwice, tl.Lost, tl.CutInFlight)
}

// Count reads the events files of a run that published ids 0..published-1.
func Count(published int, files []string) (Tally, error) {
	begun, done := map[string]int{}, map[string]int{}
	tl := Tally{Published: published}
	for _, name := range files {
		mine, err := countFile(name, begun, done)
		if err != nil {
			return tl, err
		}
		tl.CutInFlight += mine
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
	return tl, nil
}

// countFile adds one replica's events to begun and done and returns how
// many messages it began and never finished.
func countFile(name string, begun, done map[string]int) (int, error) {
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil // the replica never started
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	mine := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var kind, id string
		if _, err := fmt.Sscan(sc.Text(), &kind, &id); err != nil {
			return 0, fmt.Errorf("%s: bad line %q", name, sc.Text())
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
	return len(mine), sc.Err()
}

// Result is one rolling restart's outcome.
type Result struct {
	Strategy  string
	Tally     Tally
	ExitCodes []int // the rolled replicas' drains, then the last three's
}

// RollingRestart runs replicas of strategy (3 at a time), publishes
// messages at rate, and restarts every replica once while it publishes (at
// even fractions of the publishing; the new replica is ready before the old
// one gets SIGTERM, as a Deployment with maxSurge 1 does). Once everything
// is acknowledged (60s at most) it stops the last replicas and tallies.
func (x Exec) RollingRestart(n *NATS, dir, strategy string, messages int, rate float64) (Result, error) {
	res := Result{Strategy: strategy}
	var files []string
	var running []*Replica
	defer func() {
		for _, r := range running {
			r.Kill()
		}
	}()
	start := func() (*Replica, error) {
		r, err := x.StartReplica(n, fmt.Sprintf("%s-%d", strategy, len(files)), strategy, dir)
		if err != nil {
			return nil, err
		}
		files = append(files, r.Events)
		return r, nil
	}
	for range 3 {
		r, err := start()
		if err != nil {
			return res, err
		}
		running = append(running, r)
	}
	began := time.Now()
	published := make(chan error, 1)
	go func() { published <- n.Publish(messages, rate) }()
	length := time.Duration(float64(messages) / rate * float64(time.Second))
	var rollErr error
	for k := range running {
		time.Sleep(time.Until(began.Add(length * time.Duration(k+1) / time.Duration(len(running)+1)))) // the roll's schedule
		next, err := start()
		if err != nil {
			rollErr = err
			break
		}
		code, err := running[k].Stop()
		res.ExitCodes = append(res.ExitCodes, code)
		running[k] = next
		if err != nil {
			rollErr = err
			break
		}
	}
	if err := errors.Join(<-published, rollErr); err != nil {
		return res, err
	}
	// Not settled within the bound is an outcome, not a failure of the run:
	// what never got acknowledged shows in the tally as lost.
	_, _ = n.Settled(60 * time.Second)
	for _, r := range running {
		code, err := r.Stop()
		if err != nil {
			return res, err
		}
		res.ExitCodes = append(res.ExitCodes, code)
	}
	var err error
	res.Tally, err = Count(messages, files)
	return res, err
}
