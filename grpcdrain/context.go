package grpcdrain

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
)

// Call contexts. grpc-go derives every call's context from
// context.Background, per connection, except where a stats handler's TagConn
// returns a context of the application's: one cancelled on SIGTERM
// (signal.NotifyContext) would cancel every call in flight and every call of
// the propagation window at t0. WithStatsHandler installs a stats handler
// whose connection contexts keep their values but not their cancellation;
// calls then end on drainkit's deadline (ForceClose closes their
// connections, which cancels them) or their client's. A stats handler passed
// with WithServerOptions(grpc.StatsHandler(h)) cannot be detached (grpc-go's
// options are opaque); calls it cancels during the drain are counted in the
// timeline (lifecycle.Timeline.CancelledEarly).

// WithStatsHandler adds h (grpc.StatsHandler) to every grpc.Server the Server
// builds, after the options given so far, keeping the values of the
// connection contexts that h.TagConn returns but not their cancellation
// (context.WithoutCancel). Use it instead of
// WithServerOptions(grpc.StatsHandler(h)) for a stats handler whose TagConn
// may return a context of the application's, such as one cancelled on
// SIGTERM. Its other methods are h's.
func WithStatsHandler(h stats.Handler) Option {
	return func(s *Server) { s.grpcOpts = append(s.grpcOpts, grpc.StatsHandler(detachedStats{h})) }
}

// detachedStats is a stats.Handler whose connection contexts do not carry
// the application's cancellation.
type detachedStats struct{ stats.Handler }

func (d detachedStats) TagConn(ctx context.Context, info *stats.ConnTagInfo) context.Context {
	return context.WithoutCancel(d.Handler.TagConn(ctx, info))
}

// noteCancelled reports a call whose context was cancelled by something
// other than its client (grpc-go cancels with
// context.Canceled when the client cancels or the connection closes, which
// includes ForceClose, and with context.DeadlineExceeded at the client's
// deadline): Timeline.CancelledEarly. Only a cancellation with another cause
// is recognised, such as signal.NotifyContext's "terminated signal
// received" (Go 1.26 and later; before, NotifyContext gives no cause); an
// application context cancelled without a cause cannot be told from the
// client's cancellation.
func (s *Server) noteCancelled(ctx context.Context) {
	// Compared by identity: signal.NotifyContext's cause "is"
	// context.Canceled for errors.Is.
	if cause := context.Cause(ctx); cause == context.Canceled || cause == context.DeadlineExceeded {
		return
	}
	s.hooks.CancelledEarly()
}
