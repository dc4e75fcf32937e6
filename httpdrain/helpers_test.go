package httpdrain_test

import (
	"context"
	"errors"
	"github.com/drainkit/drainkit/internal/drainsteps"
	"github.com/drainkit/drainkit/internal/testcert"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
)

// timings returns small test timings: window min/max as given, quiet 0.
func timings(window, drain time.Duration) budget.Timings {
	return budget.Timings{
		WarmupTimeout:  5 * time.Second,
		PropagationMin: window,
		PropagationMax: window,
		DrainTimeout:   drain,
		StopTimeout:    time.Second,
		GracePeriod:    window + drain + 4*time.Second,
	}
}

// stepRecorder records when each drain step happened.
type stepRecorder = drainsteps.Recorder

// instance is one lifecycle running one httpdrain server on 127.0.0.1.
type instance struct {
	t      *testing.T
	lc     *lifecycle.Lifecycle
	srv    *http.Server
	hs     *httpdrain.Server
	addr   string
	steps  *stepRecorder
	runErr chan error
	cancel context.CancelFunc // cancels Run's context, which starts a drain
	err    error
	ended  bool
	endAt  time.Time
}

// start runs a lifecycle with one httpdrain server serving h and waits for
// READY. configure may adjust the http.Server before httpdrain.New.
func start(t *testing.T, tm budget.Timings, h http.Handler, configure func(*http.Server), opts ...httpdrain.Option) *instance {
	t.Helper()
	rec := drainsteps.New()
	lc, err := lifecycle.New(lifecycle.Options{Timings: tm, Logger: slog.New(slog.DiscardHandler), Observers: []lifecycle.Observer{rec}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	if configure != nil {
		configure(srv)
	}
	hs := httpdrain.New(srv, ln, opts...)
	lc.AddServer("http", hs)
	ctx, cancel := context.WithCancel(context.Background())
	in := &instance{t: t, lc: lc, srv: srv, hs: hs, addr: ln.Addr().String(), steps: rec, runErr: make(chan error, 1), cancel: cancel}
	sub, unsubscribe := lc.Subscribe()
	defer unsubscribe()
	go func() { in.runErr <- lc.Run(ctx) }()
	deadline := time.After(5 * time.Second)
	for lc.State() != lifecycle.Ready {
		select {
		case <-sub:
		case <-deadline:
			t.Fatalf("not READY after 5s: %s", lc.State())
		}
	}
	t.Cleanup(func() {
		cancel()
		in.wait(15 * time.Second)
	})
	return in
}

// drain starts the drain and waits until the servers are in lame duck (the
// lifecycle calls LameDuck just after Drain returns, in Run's goroutine).
func (in *instance) drain() {
	in.t.Helper()
	if err := in.lc.Drain("test"); err != nil {
		in.t.Fatal(err)
	}
	waitFor(in.t, 2*time.Second, "lame duck", func() bool {
		_, ok := in.steps.Time(lifecycle.StepNotReady)
		return ok
	})
}

func (in *instance) url(path string) string { return "http://" + in.addr + path }

// wait waits for Run to return and records its result.
func (in *instance) wait(d time.Duration) error {
	in.t.Helper()
	if in.ended {
		return in.err
	}
	select {
	case in.err = <-in.runErr:
		in.ended = true
		in.endAt = time.Now()
	case <-time.After(d):
		in.t.Fatalf("Run did not return within %s", d)
	}
	return in.err
}

func exitCode(err error) int { return lifecycle.ExitCode(err) }

// waitFor polls cond every millisecond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// selfSigned returns a certificate for 127.0.0.1 and a pool trusting it.
var selfSigned = testcert.SelfSigned

var errBadStatus = errors.New("unexpected status")
