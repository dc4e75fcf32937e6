package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// abandonGrace is how long a participant call may take to return once its
// context has ended (a well-behaved call returns ctx.Err() at once) before
// the lifecycle abandons it.
const abandonGrace = 100 * time.Millisecond

// promptBound bounds the Server calls that take no context and must return
// promptly (LameDuck, CloseListeners, InFlight, ForceClose).
const promptBound = time.Second

// errAbandoned marks the error of a participant call the lifecycle stopped
// waiting for.
var errAbandoned = errors.New("abandoned")

// callBounded makes one participant call: fn, run in its own goroutine with
// ctx, which carries the lifecycle's bound for it. It returns fn's error, or,
// if fn has not returned abandonGrace after ctx ended, an error wrapping
// errAbandoned and ctx's error: the call is abandoned (it keeps its
// goroutine, nothing waits for it) and a warning names the participant, the
// call and how long it ran. Every call the drain waits on goes through here,
// so a participant that ignores its context cannot hold the drain, nor make
// it outlive Run. fn must not write anything the caller reads unless it
// returned (callBounded's nil or fn's own error).
func (l *Lifecycle) callBounded(ctx context.Context, participant, call string, fn func(context.Context) error) error {
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	t := time.NewTimer(abandonGrace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
	}
	ran := time.Since(start)
	l.opts.Logger.Warn("drainkit: participant call abandoned: it ignored the end of its context",
		"participant", participant, "call", call, "waited_ms", ran.Milliseconds(), "cause", ctx.Err().Error())
	return fmt.Errorf("%s: %s %w after %s: %w", participant, call, errAbandoned, ran.Round(time.Millisecond), ctx.Err())
}

// callPrompt is callBounded for a call that takes no context, bounded by
// promptBound from now.
func (l *Lifecycle) callPrompt(participant, call string, fn func() error) error {
	ctx, cancel := context.WithTimeout(context.Background(), promptBound)
	defer cancel()
	return l.callBounded(ctx, participant, call, func(context.Context) error { return fn() })
}
