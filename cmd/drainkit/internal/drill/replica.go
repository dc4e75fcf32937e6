package drill

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Launch says how to start one replica: Command and Args, to which Start
// appends --http-addr and --admin-addr with fresh loopback ports (and
// --grpc-addr with GRPC), and Env, the complete environment (DRAINKIT_*
// timings included).
type Launch struct {
	Command string
	Args    []string
	Env     []string
	GRPC    bool
	// HTTPLoad, with GRPC, says that the load still calls the HTTP
	// listener (the long-lived scenario holds gRPC streams beside it).
	HTTPLoad bool
	// Listeners are the names of further listeners of the program
	// (--<name>-addr), each of which Start gives a free loopback port, so
	// that replicas do not collide on the program's default address.
	Listeners []string
}

// Replica is one child process of the service under drill.
type Replica struct {
	ID        int    // 1, 2, ... in start order within a strategy run
	HTTPAddr  string // host:port of the service listener
	AdminAddr string // host:port of the admin listener (probes)
	GRPCAddr  string // host:port of the gRPC listener, "" without Launch.GRPC
	httpLoad  bool   // Launch.HTTPLoad

	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited and stderr is read
	polling sync.Once     // starts pollState at the first stop request

	mu         sync.Mutex
	started    time.Time
	ready      time.Time
	signalled  time.Time
	stopSignal string
	exited     time.Time
	exitErr    error
	t0         time.Time
	ownReady   time.Time // the replica's own READY transition (its log)
	logTL      *ReplicaTimeline
	windowWarn *WindowWarning // its warning of a window cut at propagation.max (the first)
	stateTL    *ReplicaTimeline
	stderrTail []string
	preStop    PreStopResult
	offlined   time.Time // the console's offline (StrategyOfflineKill)

	adminToken string // DRAINKIT_ADMIN_TOKEN of its environment, "" for none
}

// PreStopResult is the outcome of Replica.PreStop: when the call began (zero
// if never), how long it took, and why it failed ("" for 200 OK).
type PreStopResult struct {
	At   time.Time
	Took time.Duration
	Err  string
}

// StartReplica starts the process with fresh ports. It returns once the
// process runs; use WaitReady for readiness.
func StartReplica(l Launch, id int) (*Replica, error) {
	httpAddr, err := freePort()
	if err != nil {
		return nil, err
	}
	adminAddr, err := freePort()
	if err != nil {
		return nil, err
	}
	r := &Replica{ID: id, HTTPAddr: httpAddr, AdminAddr: adminAddr, done: make(chan struct{}), adminToken: adminToken(l.Env), httpLoad: l.HTTPLoad}
	args := append(append([]string(nil), l.Args...), "--http-addr", httpAddr, "--admin-addr", adminAddr)
	if l.GRPC {
		if r.GRPCAddr, err = freePort(); err != nil {
			return nil, err
		}
		args = append(args, "--grpc-addr", r.GRPCAddr)
	}
	for _, name := range l.Listeners {
		addr, err := freePort()
		if err != nil {
			return nil, err
		}
		args = append(args, "--"+name+"-addr", addr)
	}
	cmd := exec.Command(l.Command, args...)
	cmd.Env = l.Env
	cmd.Stdout = io.Discard
	cmd.Stderr = &lineWriter{fn: r.stderrLine}
	// Own process group: a Ctrl-C at the terminal reaches the drill, which
	// then stops the replicas itself; Pdeathsig kills them if the drill dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	r.cmd = cmd
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start replica %d (%s): %w", id, l.Command, err)
	}
	r.started = time.Now()
	go func() {
		err := cmd.Wait()
		r.mu.Lock()
		r.exited = time.Now()
		r.exitErr = err
		r.mu.Unlock()
		close(r.done)
	}()
	return r, nil
}

// Done is closed when the process has exited.
func (r *Replica) Done() <-chan struct{} { return r.done }

// Pid returns the process ID.
func (r *Replica) Pid() int { return r.cmd.Process.Pid }

// WaitReady polls GET /readyz on the admin listener every 25 ms until it
// answers 200 (nil), the process exits, or ctx ends.
func (r *Replica) WaitReady(ctx context.Context, client *http.Client) error {
	url := "http://" + r.AdminAddr + "/readyz"
	t := time.NewTicker(25 * time.Millisecond)
	defer t.Stop()
	for {
		if probe(ctx, client, url) {
			r.mu.Lock()
			r.ready = time.Now()
			r.mu.Unlock()
			return nil
		}
		select {
		case <-r.done:
			return fmt.Errorf("replica %d exited before it was ready: %v%s", r.ID, r.ExitErr(), r.tailForError())
		case <-ctx.Done():
			return fmt.Errorf("replica %d not ready: %w%s", r.ID, ctx.Err(), r.tailForError())
		case <-t.C:
		}
	}
}

// probe reports whether GET url answered 200.
func probe(ctx context.Context, client *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Terminate sends SIGTERM and records when. From the first stop request
// (PreStop or Terminate) on, it polls GET /state on the admin listener every
// 100 ms until the process exits, keeping the last drain timeline it saw, for
// binaries that do not log their timeline as JSON.
func (r *Replica) Terminate(client *http.Client) error {
	if err := r.signal(syscall.SIGTERM); err != nil {
		return err
	}
	r.polling.Do(func() { go r.pollState(client) })
	return nil
}

// KillNow sends SIGKILL as the rolling restart's stop (StrategyKill) and
// records when, like Terminate; nothing can drain, so nothing is polled.
func (r *Replica) KillNow() error { return r.signal(syscall.SIGKILL) }

func (r *Replica) signal(sig syscall.Signal) error {
	r.mu.Lock()
	r.signalled = time.Now()
	r.stopSignal = signalName(sig)
	r.mu.Unlock()
	if err := r.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("%s replica %d: %w", signalName(sig), r.ID, err)
	}
	return nil
}

// signalName is "SIGTERM", "SIGKILL".
func signalName(sig syscall.Signal) string {
	if sig == syscall.SIGKILL {
		return "SIGKILL"
	}
	return "SIGTERM"
}

// StopSignal returns the signal the drill stopped the replica with
// ("SIGTERM", "SIGKILL"), "" before it did.
func (r *Replica) StopSignal() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopSignal
}

// PreStop does what a Kubernetes preStop hook running `drainkit prestop`
// does: POST /drain?wait=propagation on the admin listener, returning when
// the service answers (200 once its propagation window ended), when the
// process exits, or after timeout (the kubelet bounds a hook by the grace
// period). It records the outcome (PreStopResult) and never fails: the
// kubelet sends SIGTERM whatever the hook's outcome. client supplies the
// transport; the call has no timeout of its own but timeout.
func (r *Replica) PreStop(ctx context.Context, timeout time.Duration, client *http.Client) {
	start := time.Now()
	r.mu.Lock()
	r.preStop.At = start
	r.mu.Unlock()
	r.polling.Do(func() { go r.pollState(client) })

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// Give up when the process exits: nobody will answer then.
	go func() {
		select {
		case <-r.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	errText := ""
	req, err := r.adminRequest(ctx, http.MethodPost, "/drain?wait=propagation&reason=preStop")
	if err == nil {
		var resp *http.Response
		resp, err = (&http.Client{Transport: client.Transport}).Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				errText = strings.TrimSpace(resp.Status + ": " + strings.TrimSpace(string(body)))
			}
		}
	}
	if err != nil {
		errText = err.Error()
	}
	r.mu.Lock()
	r.preStop.Took = time.Since(start)
	r.preStop.Err = errText
	r.mu.Unlock()
}

// noteOffline records that an operator marked the replica offline in its
// registry (StrategyOfflineKill), now.
func (r *Replica) noteOffline() {
	r.mu.Lock()
	r.offlined = time.Now()
	r.mu.Unlock()
}

// Offlined is when an operator marked the replica offline (zero if never).
func (r *Replica) Offlined() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.offlined
}

// PreStopResult returns the outcome of PreStop (At is zero if it was never
// called).
func (r *Replica) PreStopResult() PreStopResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.preStop
}

func (r *Replica) pollState(client *http.Client) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if body, ok := r.getAdmin(ctx, client, "/state"); ok {
			if tl, ok := parseStateTimeline(body); ok {
				r.mu.Lock()
				r.stateTL = &tl
				r.mu.Unlock()
			}
		}
		cancel()
		select {
		case <-r.done:
			return
		case <-t.C:
		}
	}
}

// Kill sends SIGKILL (cleanup after a failed run); it is a no-op once the
// process has exited.
func (r *Replica) Kill() {
	select {
	case <-r.done:
	default:
		_ = r.cmd.Process.Kill()
	}
}

// WaitExit waits for the process to exit or ctx to end.
func (r *Replica) WaitExit(ctx context.Context) error {
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("replica %d did not exit: %w", r.ID, ctx.Err())
	}
}

// ExitErr returns the process's exit error (nil for exit code 0), once it
// has exited.
func (r *Replica) ExitErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.exitErr
}

// ExitCode returns the process's exit code, -1 when a signal killed it or it
// has not exited.
func (r *Replica) ExitCode() int {
	select {
	case <-r.done:
		return r.cmd.ProcessState.ExitCode()
	default:
		return -1
	}
}

// Times returns when the replica was started, became ready, got SIGTERM and
// exited (zero when that has not happened).
func (r *Replica) Times() (started, ready, signalled, exited time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started, r.ready, r.signalled, r.exited
}

// OwnReady returns when the replica logged its READY transition (zero when
// it logged none: not a drainkit program, or not ready yet).
func (r *Replica) OwnReady() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ownReady
}

// Timeline returns the replica's own drain report: the JSON exit log line if
// it wrote one, else the last GET /state timeline; ok is false when it
// reported nothing (a process that just died).
func (r *Replica) Timeline() (ReplicaTimeline, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var tl *ReplicaTimeline
	switch {
	case r.logTL != nil:
		tl = r.logTL
	case r.stateTL != nil:
		tl = r.stateTL
	default:
		return ReplicaTimeline{}, false
	}
	out := *tl
	if out.T0.IsZero() {
		out.T0 = r.t0
	}
	return out, true
}

// WindowWarning returns the replica's warning of a propagation window cut
// at propagation.max while consumers still sent, nil if it logged none.
func (r *Replica) WindowWarning() *WindowWarning {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.windowWarn
}

// StderrTail returns the last lines the process wrote to stderr.
func (r *Replica) StderrTail() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.stderrTail...)
}

func (r *Replica) tailForError() string {
	tail := r.StderrTail()
	if len(tail) == 0 {
		return ""
	}
	return "; its stderr ends with:\n    " + strings.Join(tail, "\n    ") + bindHint(tail)
}

const stderrTailLines = 8

func (r *Replica) stderrLine(line []byte) {
	var tl *ReplicaTimeline
	if bytes.Contains(line, []byte(`"timeline"`)) {
		if t, ok := parseLogTimeline(line); ok {
			tl = &t
		}
	}
	ww, isWarn := parseWindowWarning(line)
	t0, isDraining := parseDrainingLine(line)
	readyAt, isReady := parseTransitionLine(line, "READY")
	r.mu.Lock()
	defer r.mu.Unlock()
	if isReady && r.ownReady.IsZero() {
		r.ownReady = readyAt
	}
	if tl != nil {
		r.logTL = tl
	}
	if isWarn && r.windowWarn == nil {
		r.windowWarn = &ww
	}
	if isDraining && r.t0.IsZero() {
		r.t0 = t0
	}
	if len(r.stderrTail) == stderrTailLines {
		copy(r.stderrTail, r.stderrTail[1:])
		r.stderrTail = r.stderrTail[:stderrTailLines-1]
	}
	r.stderrTail = append(r.stderrTail, string(line))
}

// lineWriter calls fn for each complete line written to it (without the
// newline); a line longer than 1 MiB is cut.
type lineWriter struct {
	fn  func([]byte)
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.fn(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 1<<20 {
		w.fn(w.buf)
		w.buf = nil
	}
	return len(p), nil
}
