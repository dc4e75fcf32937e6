package drill

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/internal/syncx"
)

// Stream kinds of ScenarioLongLived: the example's server-sent events
// (GET /events) over HTTP/1.1 and over HTTP/2 without TLS (prior
// knowledge, h2c), where a drain also sends GOAWAY, and, when the replicas
// serve gRPC (the built-in strategies), gRPC server streams
// (GRPCStreamMethod), which a drain ends cleanly after GOAWAY.
const (
	StreamSSE  = "sse-http1"
	StreamH2   = "sse-http2"
	StreamGRPC = "grpc-stream"
)

// streamKinds lists the HTTP stream kinds in report order (StreamGRPC
// comes last when the replicas serve gRPC).
var streamKinds = []string{StreamSSE, StreamH2}

// Stream settings of ScenarioLongLived.
const (
	// streamsPerKind is how many streams of each kind each consumer holds.
	streamsPerKind = 2
	// streamPath is what a stream requests: the example's SSE endpoint.
	streamPath = "/events"
	// streamStall is how long a stream may go without a line before it
	// counts as timed out (the example sends an event every 100 ms).
	streamStall = 2 * time.Second
	// naiveReconnect is how long the naive stream client waits before it
	// reconnects (a browser's EventSource default is about 3 s); it ignores
	// the drain event and its retry field.
	naiveReconnect = 2 * time.Second
	// drainRetry is how long the drainkit stream client waits before it
	// re-opens a stream that a draining instance ended at once again (the
	// view still listed it): the drain event's own retry field when it
	// gives one.
	drainRetry = time.Second
	// streamsOpenWithin bounds the wait for every stream's first event
	// before the rolling restart starts.
	streamsOpenWithin = 10 * time.Second
)

// StreamSummary is one stream kind of a ScenarioLongLived run.
type StreamSummary struct {
	// Kind is StreamSSE or StreamH2; Streams how many the consumers held.
	Kind    string `json:"kind"`
	Streams int    `json:"streams"`
	// Opened counts the stream requests (re-openings included).
	Opened int `json:"opened"`
	// DrainEnded counts the streams a draining instance ended with its
	// drain signal (the SSE "event: drain"), ReopenedElsewhere those whose
	// next stream that carried events came from another replica.
	DrainEnded        int `json:"ended_by_drain_signal"`
	ReopenedElsewhere int `json:"reopened_elsewhere"`
	// Errors counts the streams that failed to open or broke (EOF without
	// the drain signal, reset, refused, stalled for 2 s), ErrorExample one
	// error's text.
	Errors       int    `json:"errors"`
	ErrorExample string `json:"error_example,omitempty"`
}

// streamsDrained reports whether streams of every kind were held and ended
// by the drain signal (else the run proved nothing about them).
func streamsDrained(sums []StreamSummary) bool {
	for _, k := range sums {
		if k.DrainEnded == 0 {
			return false
		}
	}
	return len(sums) > 0
}

// streamEnd is how one stream ended.
type streamEnd struct {
	addr    string // the instance it went to, "" if none
	events  int    // data events read
	drained bool   // it ended with the drain signal
	retry   time.Duration
	status  int
	err     error // nil when drained or closed by the drill
}

// streamOpener opens streams of one kind for one consumer.
type streamOpener interface {
	// open sends GET /events; addr is the instance it went to (the last one
	// tried), "" if none.
	open(ctx context.Context, prev string) (resp *http.Response, addr string, err error)
	// next says how long to wait before the next stream after e.
	next(e streamEnd) time.Duration
	close()
}

// longLived is ScenarioLongLived: open the streams, wait until every one
// carries events, run the rolling restart, hold the streams for Config.Tail
// on the new replicas, then close them.
func (s *strategyRun) longLived(ctx context.Context, disc Discovery, initial []*Replica) error {
	s.st.set("opening %d streams", len(streamKinds)*streamsPerKind*s.cfg.Consumers)
	st, err := s.startStreams(ctx, disc)
	if err != nil {
		return err
	}
	// Also when the restart fails: the streams' numbers so far are reported.
	defer func() {
		st.stop()
		s.streamSums = st.summaries()
	}()
	if err := st.awaitOpen(ctx); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	if err := s.rolling(ctx, disc, initial); err != nil {
		return err
	}
	s.st.set("streams on the new replicas")
	return syncx.Sleep(ctx, s.cfg.Tail)
}

// streamSet is the run's streams.
type streamSet struct {
	s       *strategyRun
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	openers []streamOpener
	grpc    []Client       // the gRPC stream consumers
	opened  sync.WaitGroup // done once per stream at its first event
	stopped sync.Once

	// rr spreads the naive streams' picks over the instances.
	rr atomic.Uint64
	// kinds are the stream kinds held, in report order.
	kinds []string

	mu   sync.Mutex
	sums map[string]*StreamSummary
}

// startStreams starts streamsPerKind streams of each kind per consumer,
// each re-opening until the set stops.
func (s *strategyRun) startStreams(ctx context.Context, disc Discovery) (*streamSet, error) {
	sctx, cancel := context.WithCancel(ctx)
	st := &streamSet{s: s, cancel: cancel, sums: map[string]*StreamSummary{}, kinds: streamKinds}
	if s.launch.GRPC {
		st.kinds = append(slices.Clip(st.kinds), StreamGRPC)
	}
	for _, kind := range st.kinds {
		st.sums[kind] = &StreamSummary{Kind: kind}
	}
	for c := range s.cfg.Consumers {
		for _, kind := range streamKinds {
			o, err := s.newStreamOpener(kind, disc, &st.rr)
			if err != nil {
				st.stop()
				return nil, fmt.Errorf("%s: streams: %w", s.name, err)
			}
			st.openers = append(st.openers, o)
			for range streamsPerKind {
				st.sums[kind].Streams++
				st.opened.Add(1)
				st.wg.Go(func() { st.loop(sctx, c+1, kind, o) })
			}
		}
		if s.launch.GRPC {
			if err := st.startGRPC(sctx, c+1, disc); err != nil {
				st.stop()
				return nil, fmt.Errorf("%s: gRPC streams: %w", s.name, err)
			}
		}
	}
	return st, nil
}

// awaitOpen waits until every stream carried its first event.
func (st *streamSet) awaitOpen(ctx context.Context) error {
	done := make(chan struct{})
	go func() { st.opened.Wait(); close(done) }()
	t := time.NewTimer(streamsOpenWithin)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("not every stream carried an event within %s: %s", streamsOpenWithin, st.errorText())
	}
}

// errorText names the streams' first errors so far.
func (st *streamSet) errorText() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	var parts []string
	for _, kind := range st.kinds {
		if k := st.sums[kind]; k.ErrorExample != "" {
			parts = append(parts, kind+": "+k.ErrorExample)
		}
	}
	if len(parts) == 0 {
		return "no error"
	}
	return strings.Join(parts, "; ")
}

// stop closes every stream and waits for their loops; it may be called more
// than once.
func (st *streamSet) stop() {
	st.stopped.Do(func() {
		st.cancel()
		st.wg.Wait()
		for _, o := range st.openers {
			o.close()
		}
		closeAll(st.grpc)
	})
}

// summaries returns the streams by kind, in streamKinds order.
func (st *streamSet) summaries() []StreamSummary {
	st.mu.Lock()
	defer st.mu.Unlock()
	out := make([]StreamSummary, 0, len(st.kinds))
	for _, kind := range st.kinds {
		out = append(out, *st.sums[kind])
	}
	return out
}

// loop holds one stream: open, read to its end, record it, wait as the
// opener says, again, until ctx ends.
func (st *streamSet) loop(ctx context.Context, consumerID int, kind string, o streamOpener) {
	var first sync.Once
	defer first.Do(st.opened.Done) // a loop that never opened does not hold awaitOpen up past ctx
	rec := st.s.recorder()
	prev, drainedFrom := "", 0
	for ctx.Err() == nil {
		sent := time.Now()
		e := readStream(ctx, o, prev, kind == StreamH2, func() { first.Do(st.opened.Done) })
		replica := st.s.replicaOf(e.addr)
		if ctx.Err() != nil && e.err != nil { // closed by the drill at the end
			e.err = nil
		}
		r := Record{Start: rec.Offset(sent), Sent: rec.Offset(sent), End: rec.Offset(time.Now()), Consumer: consumerID, Replica: replica, Outcome: Classify(e.status, e.err)}
		if e.err != nil {
			r.Outcome = Classify(0, e.err)
			r.Err = kind + " stream: " + e.err.Error()
		}
		rec.Add(r)
		st.mu.Lock()
		k := st.sums[kind]
		k.Opened++
		switch {
		case e.err != nil:
			k.Errors++
			if k.ErrorExample == "" {
				k.ErrorExample = r.Err
			}
		case e.drained:
			k.DrainEnded++
		}
		if drainedFrom != 0 && e.events > 0 {
			if replica != drainedFrom {
				k.ReopenedElsewhere++
			}
			drainedFrom = 0
		}
		st.mu.Unlock()
		if e.drained && e.events > 0 {
			drainedFrom = replica
		}
		prev = e.addr
		if e.err != nil {
			prev = ""
		}
		if syncx.Sleep(ctx, o.next(e)) != nil {
			return
		}
	}
}

// readStream opens one stream and reads it to its end: the drain event,
// an error, a stall of streamStall, or ctx's end. opened is called at the
// first data event; h2 requires the response to come over HTTP/2.
func readStream(ctx context.Context, o streamOpener, prev string, h2 bool, opened func()) streamEnd {
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stalled := errors.New("no event for " + streamStall.String() + ": stalled")
	watchdog := time.AfterFunc(streamStall, func() { cancel(stalled) })
	defer watchdog.Stop()
	resp, addr, err := o.open(sctx, prev)
	e := streamEnd{addr: addr}
	if err != nil {
		e.err = streamErr(sctx, err)
		return e
	}
	defer resp.Body.Close()
	e.status = resp.StatusCode
	if resp.StatusCode != http.StatusOK {
		e.err = fmt.Errorf("opening the stream: %s", resp.Status)
		return e
	}
	if h2 && resp.ProtoMajor != 2 {
		e.err = fmt.Errorf("opening the stream: answered over %s, want HTTP/2", resp.Proto)
		return e
	}
	sc := bufio.NewScanner(resp.Body)
	event := ""
	for sc.Scan() {
		watchdog.Reset(streamStall)
		line := sc.Text()
		switch {
		case line == "":
			if event == "drain" {
				e.drained = true
			}
			event = ""
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "retry:"):
			if ms, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "retry:"))); err == nil && ms >= 0 {
				e.retry = time.Duration(ms) * time.Millisecond
			}
		case strings.HasPrefix(line, "data:") && event == "":
			e.events++
			if e.events == 1 {
				opened()
			}
		}
	}
	if e.drained {
		return e
	}
	if err := sc.Err(); err != nil {
		e.err = streamErr(sctx, err)
	} else {
		e.err = fmt.Errorf("the stream ended without the drain signal: %w", io.ErrUnexpectedEOF)
	}
	return e
}

// streamErr is err, or the stall when the watchdog cut the stream.
func streamErr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return fmt.Errorf("%w: %w", cause, context.DeadlineExceeded)
	}
	return err
}

// newStreamOpener returns the stream opener of the run's consumer kind:
// the drainkit consumer's Transport for ConsumerDrainkit, else the naive
// one. Both follow the discovery itself: a stream is re-opened rarely, so
// --consumer-cache does not apply to it.
func (s *strategyRun) newStreamOpener(kind string, disc Discovery, rr *atomic.Uint64) (streamOpener, error) {
	base := &http.Transport{
		Proxy:              nil, // loopback only
		DialContext:        drillDialer,
		DisableCompression: true,
		IdleConnTimeout:    90 * time.Second,
	}
	if kind == StreamH2 {
		p := new(http.Protocols)
		p.SetUnencryptedHTTP2(true)
		base.Protocols = p
	}
	if s.cfg.ConsumerKind != ConsumerDrainkit {
		return &naiveStreams{src: disc, client: &http.Client{Transport: base}, rr: rr}, nil
	}
	logger := slog.New(slog.DiscardHandler)
	service := s.cfg.serviceName(s.name)
	w, err := consumer.NewWatcher(consumer.WatcherOptions{Source: disc, Service: service, Logger: logger})
	if err != nil {
		return nil, err
	}
	tr, err := consumer.NewTransport(w, service, consumer.Options{Base: base, Logger: logger})
	if err != nil {
		w.Close()
		return nil, err
	}
	return &drainkitStreams{w: w, tr: tr, client: &http.Client{Transport: tr}, service: service}, nil
}

// drainkitStreams opens streams through the drainkit consumer: each
// (re-)opening picks an instance from its view (ejected ones aside), and a
// refused dial is retried elsewhere.
type drainkitStreams struct {
	w       *consumer.Watcher
	tr      *consumer.Transport
	client  *http.Client
	service string
}

func (d *drainkitStreams) open(ctx context.Context, _ string) (*http.Response, string, error) {
	var out consumer.Outcome
	req, err := http.NewRequestWithContext(consumer.WithOutcome(ctx, &out), http.MethodGet, "http://"+d.service+streamPath, nil)
	if err != nil {
		return nil, "", err
	}
	resp, err := d.client.Do(req)
	return resp, out.Addr, err
}

// next re-opens at once after the drain signal, unless the stream was
// ended at once (the view still listed the draining instance): then after
// the event's retry delay.
func (d *drainkitStreams) next(e streamEnd) time.Duration {
	switch {
	case e.drained && e.events == 0:
		if e.retry > 0 {
			return e.retry
		}
		return drainRetry
	case e.err != nil:
		return 100 * time.Millisecond
	}
	return 0
}

func (d *drainkitStreams) close() {
	d.tr.Close()
	d.w.Close()
}

// naiveStreams is a stream client as a browser's EventSource behaves behind
// a list of instances: it picks an instance round robin from the
// discovery's list, reconnects to the same address after naiveReconnect
// whatever ended the stream (it ignores the drain event), and picks again
// only after an error.
type naiveStreams struct {
	src    Source
	client *http.Client
	rr     *atomic.Uint64 // shared by the run's naive streams
}

func (n *naiveStreams) open(ctx context.Context, prev string) (*http.Response, string, error) {
	addr := prev
	if addr == "" {
		eps := n.src.Endpoints()
		if len(eps) == 0 {
			return nil, "", ErrNoEndpoint
		}
		addr = eps[n.rr.Add(1)%uint64(len(eps))].Addr
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+streamPath, nil)
	if err != nil {
		return nil, addr, err
	}
	resp, err := n.client.Do(req)
	return resp, addr, err
}

func (n *naiveStreams) next(streamEnd) time.Duration { return naiveReconnect }

func (n *naiveStreams) close() { n.client.CloseIdleConnections() }

// longLivedVerdict explains a ScenarioLongLived run: the rolling restart's
// verdict, then the streams.
func longLivedVerdict(cfg Config, run StrategyRun, s Summary, windowCut []string) string {
	var parts []string
	for _, k := range s.Streams {
		p := fmt.Sprintf("%s: %d streams, %d opened, %d ended by the drain signal, %d re-opened on another replica, %d errors",
			k.Kind, k.Streams, k.Opened, k.DrainEnded, k.ReopenedElsewhere, k.Errors)
		if k.ErrorExample != "" {
			p += fmt.Sprintf(" (%s)", k.ErrorExample)
		}
		parts = append(parts, p)
	}
	streams := "; streams (each counted as a request from its opening to its end): " + strings.Join(parts, "; ")
	if len(s.Streams) == 0 {
		streams = "; no stream was held (the run ended before its streams opened)"
	}
	head := verdictBody(cfg, run, s, windowCut)
	errs := 0
	for _, k := range s.Streams {
		errs += k.Errors
	}
	if errs > 0 && errs == s.Failed {
		head = fmt.Sprintf("FAIL: %d of %d requests and streams failed (%s), all of them streams: a stream broke or was re-opened where it could not be served", s.Failed, s.Requests, kindList(s.FailuresByKind))
		if run.Consumer != ConsumerDrainkit {
			head += fmt.Sprintf(" (the %s consumer ignores the drain signal and reconnects to the same address %s later, after its listener closed)", run.Consumer, naiveReconnect)
		}
	}
	if s.Failed == 0 && !streamsDrained(s.Streams) {
		head = "FAIL: no request or stream failed, but not every stream kind was ended by a drain signal, so the drain of streams was not rehearsed"
	}
	return head + streams
}
