package natsdrain

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/drainkit/drainkit/workdrain"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// run is the worker's run function: pull while ctx (the stop) allows, as
// many messages as there are free handlers; then wait for the handlers,
// flush the naks and drain the connection.
func (c *Config) run(ctx context.Context, w *workdrain.Worker) error {
	free := make(chan struct{}, c.Concurrency) // one token per free handler
	for range c.Concurrency {
		free <- struct{}{}
	}
	var handlers sync.WaitGroup
	backoff := fetchBackoff{}
	for ctx.Err() == nil {
		n := take(ctx, free)
		if n == 0 {
			break // stopped while every handler was busy
		}
		batch, err := c.Consumer.Fetch(n, jetstream.FetchMaxWait(c.FetchMaxWait))
		if err != nil {
			give(free, n)
			c.Logger.Warn("natsdrain: fetch failed; retrying", "error", err, "retry_in_ms", backoff.next().Milliseconds())
			backoff.wait(ctx)
			continue
		}
		backoff = fetchBackoff{}
		got := 0
		for msg := range batch.Messages() {
			got++
			unit, end, ok := w.Begin()
			if !ok {
				// Delivered after the stop: hand it to another replica now.
				c.nak(msg)
				free <- struct{}{}
				continue
			}
			handlers.Go(func() {
				defer func() { free <- struct{}{} }()
				defer end()
				c.handle(unit, msg)
			})
		}
		give(free, n-got)
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && ctx.Err() == nil {
			c.Logger.Warn("natsdrain: fetch ended with an error", "error", err)
		}
	}
	handlers.Wait()
	c.closeConn()
	return nil
}

// take blocks for one free handler, then takes every other free one
// without blocking, and returns how many it took (0 if ctx ended first).
func take(ctx context.Context, free chan struct{}) int {
	select {
	case <-free:
	case <-ctx.Done():
		return 0
	}
	n := 1
	for {
		select {
		case <-free:
			n++
		default:
			return n
		}
	}
}

func give(free chan struct{}, n int) {
	for range n {
		free <- struct{}{}
	}
}

// handle runs the handler on one message and acks it (confirmed) if the
// handler returned nil, else naks it. If the unit's context ends first
// (drain.timeout), the message is nak'ed at once and the handler abandoned:
// one that ignores its context must not keep the message from another
// replica.
func (c *Config) handle(unit context.Context, msg jetstream.Msg) {
	res := make(chan error, 1)
	go func() { res <- c.call(unit, msg) }()
	var err error
	select {
	case err = <-res:
	case <-unit.Done():
		select {
		case err = <-res: // it finished as the deadline came
		default:
			c.nak(msg)
			c.Logger.Warn("natsdrain: message force-cancelled at drain.timeout; nak'ed for redelivery",
				append(msgAttrs(msg), "cause", context.Cause(unit).Error())...)
			return
		}
	}
	if err != nil {
		c.nak(msg)
		c.Logger.Warn("natsdrain: handler failed; nak'ed for redelivery", append(msgAttrs(msg), "error", err.Error())...)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.AckTimeout)
	defer cancel()
	if err := msg.DoubleAck(ctx); err != nil {
		c.Logger.Warn("natsdrain: ack not confirmed; the message may be redelivered", append(msgAttrs(msg), "error", err.Error())...)
	}
}

// call runs the handler; a panic becomes an error, so the message is
// nak'ed and the unit still ends.
func (c *Config) call(ctx context.Context, msg jetstream.Msg) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panicked: %v", r)
		}
	}()
	return c.Handler(ctx, msg)
}

func (c *Config) nak(msg jetstream.Msg) {
	if err := msg.Nak(); err != nil {
		c.Logger.Warn("natsdrain: nak failed; the message returns after the ack wait", append(msgAttrs(msg), "error", err.Error())...)
	}
}

// closeConn flushes what was sent (the naks are not confirmed one by one),
// drains the connection and waits, within AckTimeout, for it to close.
func (c *Config) closeConn() {
	if c.Conn == nil {
		return
	}
	if err := c.Conn.FlushTimeout(c.AckTimeout); err != nil {
		c.Logger.Warn("natsdrain: flush before the connection drain failed", "error", err)
	}
	if err := c.Conn.Drain(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		c.Logger.Warn("natsdrain: connection drain failed", "error", err)
		return
	}
	// nats.Conn offers no channel for its close other than the one
	// ClosedHandler, which belongs to the program: poll with a deadline.
	deadline := time.Now().Add(c.AckTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !c.Conn.IsClosed() {
		if time.Now().After(deadline) {
			c.Logger.Warn("natsdrain: the connection did not close after its drain", "waited_ms", c.AckTimeout.Milliseconds())
			return
		}
		<-tick.C
	}
}

func msgAttrs(msg jetstream.Msg) []any {
	attrs := []any{"subject", msg.Subject()}
	if md, err := msg.Metadata(); err == nil {
		attrs = append(attrs, "stream", md.Stream, "stream_seq", md.Sequence.Stream, "delivered", md.NumDelivered)
	}
	return attrs
}

// fetchBackoff spaces retries of a failing fetch: 100ms doubling to 2s.
type fetchBackoff struct{ d time.Duration }

func (b *fetchBackoff) next() time.Duration {
	switch {
	case b.d == 0:
		b.d = 100 * time.Millisecond
	case b.d < 2*time.Second:
		b.d = min(2*b.d, 2*time.Second)
	}
	return b.d
}

// wait sleeps the current delay or until ctx (the stop) ends.
func (b *fetchBackoff) wait(ctx context.Context) {
	t := time.NewTimer(b.d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
