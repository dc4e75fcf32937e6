package drill

import (
	"cmp"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/stats"
	grpcstatus "google.golang.org/grpc/status"
)

// grpcCall is what one request of the gRPC load does on a consumer's
// grpc.ClientConn: a unary call (ProtocolGRPC), or a server stream held for
// hold and re-opened when the server ends it cleanly before
// (ProtocolGRPCStream).
type grpcCall struct {
	stream bool
	hold   time.Duration
	// route, if set, names the instance behind a connection whose local
	// end is at the address given, for a ClientConn that dials a
	// connection-level balancer (connBalancer.Backend); "" keeps the
	// connection's remote address.
	route func(local net.Addr) string
}

// do runs the call on cc, bounded by ctx (the request timeout), and
// reports it as an Attempt: the instance of its last try, the error (nil
// for success) classified as Classify expects, the tries after the first
// (grpc-go's retries and, for a stream, its re-opens), and from the
// call's trace the first instance tried and the one written to and
// unanswered.
func (g grpcCall) do(ctx context.Context, cc *grpc.ClientConn) Attempt {
	tr := &callTrace{route: g.route}
	ctx = context.WithValue(ctx, callTraceKey{}, tr)
	client := testpb.NewTestServiceClient(cc)
	var err error
	reopens := 0
	if g.stream {
		reopens, err = g.holdStream(ctx, client)
	} else {
		_, err = client.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: int32(GRPCUnaryWork / time.Millisecond)})
	}
	first, last, unanswered, tries := tr.result()
	return Attempt{Addr: last, Err: grpcOutcome(err), Retries: max(tries-1, reopens, 0), FirstAddr: first, Unanswered: unanswered}
}

// holdStream keeps a stream open until g.hold has passed, re-opening it
// whenever the server ends it cleanly before (the drain signal); it
// returns how often it re-opened and the error that ended it early (nil
// once the hold is over). A re-open after the first waits 10 ms more each
// time, so that a client routed back to a draining instance does not spin.
func (g grpcCall) holdStream(ctx context.Context, client testpb.TestServiceClient) (reopens int, err error) {
	holdCtx, cancel := context.WithTimeout(ctx, g.hold)
	defer cancel()
	req := &testpb.StreamingOutputCallRequest{ResponseParameters: []*testpb.ResponseParameters{{IntervalUs: int32(GRPCStreamInterval / time.Microsecond)}}}
	for {
		st, err := client.StreamingOutputCall(holdCtx, req)
		if err == nil {
			for err == nil {
				_, err = st.Recv()
			}
		}
		switch {
		case ctx.Err() == nil && (holdCtx.Err() != nil || grpcstatus.Code(err) == codes.DeadlineExceeded):
			// Held to the end: the client's deadline, or the server's copy
			// of it (grpc-timeout), which may end the stream first.
			return reopens, nil
		case !errors.Is(err, io.EOF):
			return reopens, err
		}
		// A clean end before the hold: the server's drain signal.
		if reopens > 0 {
			t := time.NewTimer(time.Duration(reopens) * 10 * time.Millisecond)
			select {
			case <-holdCtx.Done():
			case <-t.C:
			}
			t.Stop()
		}
		reopens++
	}
}

// grpcDialOptions are the options of every consumer's grpc.ClientConn:
// plaintext, connections through the drill's counting dialer, and the
// call trace as a stats handler.
func grpcDialOptions(dial func(ctx context.Context, network, addr string) (net.Conn, error)) []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return dial(ctx, "tcp", addr) }),
		grpc.WithStatsHandler(traceHandler{}),
	}
}

// callTraceKey is the context key of a request's callTrace.
type callTraceKey struct{}

// callTrace follows one request of the gRPC load over its tries (grpc-go's
// transparent retries and retry policy, a stream's re-opens), as
// writeTracker does for HTTP: the first instance it went to, the last one,
// and the first one whose try sent its headers and got none back: a call
// that may have reached a server and been lost there. For gRPC "sent" means
// grpc-go handed the call's headers to an established connection.
type callTrace struct {
	route func(local net.Addr) string // grpcCall.route

	mu       sync.Mutex
	tries    int
	first    string
	last     string
	sent     []string
	answered map[string]bool
}

func (t *callTrace) result() (first, last, unanswered string, tries int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, a := range t.sent {
		if !t.answered[a] {
			unanswered = a
			break
		}
	}
	return t.first, t.last, unanswered, t.tries
}

// traceHandler is the stats.Handler that fills in each call's callTrace
// (found in the call's context).
type traceHandler struct{}

func (traceHandler) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (traceHandler) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (traceHandler) HandleConn(context.Context, stats.ConnStats) {}

func (traceHandler) HandleRPC(ctx context.Context, s stats.RPCStats) {
	t, ok := ctx.Value(callTraceKey{}).(*callTrace)
	if !ok || !s.IsClient() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch s := s.(type) {
	case *stats.Begin:
		t.tries++
	case *stats.OutHeader:
		if s.RemoteAddr == nil {
			return
		}
		a := s.RemoteAddr.String()
		if t.route != nil {
			a = cmp.Or(t.route(s.LocalAddr), a)
		}
		if t.first == "" {
			t.first = a
		}
		t.last = a
		t.sent = append(t.sent, a)
	case *stats.InHeader, *stats.InPayload, *stats.InTrailer:
		if t.last != "" {
			if t.answered == nil {
				t.answered = map[string]bool{}
			}
			t.answered[t.last] = true
		}
	}
}

// grpcError is a gRPC status error that also matches, with errors.Is, the
// condition behind it (ECONNREFUSED, ECONNRESET, io.EOF, a deadline), so
// that Classify files it as it files the same failure over HTTP. Its text
// is the status's.
type grpcError struct {
	err   error
	cause error
}

func (e *grpcError) Error() string   { return e.err.Error() }
func (e *grpcError) Unwrap() []error { return []error{e.cause, e.err} }

// grpcOutcome wraps a call's error for Classify; nil stays nil. grpc-go
// reports transport failures as codes.Unavailable with the cause only in
// the message ("connection refused", "connection reset by peer", "error
// reading from server: EOF").
func grpcOutcome(err error) error {
	if err == nil {
		return nil
	}
	st, ok := grpcstatus.FromError(err)
	if !ok {
		return err
	}
	msg := st.Message()
	var cause error
	switch {
	case st.Code() == codes.DeadlineExceeded:
		cause = context.DeadlineExceeded
	case st.Code() != codes.Unavailable:
		return err
	case strings.Contains(msg, "zero addresses"), strings.Contains(msg, "no children to pick from"):
		cause = ErrNoEndpoint // the resolver listed no instance
	case strings.Contains(msg, "connection refused"):
		cause = syscall.ECONNREFUSED
	case strings.Contains(msg, "connection reset"), strings.Contains(msg, "broken pipe"):
		cause = syscall.ECONNRESET
	case strings.Contains(msg, "EOF"):
		cause = io.EOF
	default:
		return err
	}
	return &grpcError{err: err, cause: cause}
}
