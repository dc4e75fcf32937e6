// Package natsdrain drains a NATS JetStream pull consumer with drainkit: at
// the drain phase chosen (t0, or the propagation window's end) the worker
// stops pulling, finishes and acks the messages it holds, naks what it took
// after the stop or could not finish by drain.timeout (so another replica
// gets them at once, not after the ack wait), then drains the connection.
//
// It is its own module, github.com/drainkit/drainkit/workdrain/natsdrain, so
// a program that does not consume NATS does not pay for nats.go:
//
//	w, err := natsdrain.New(natsdrain.Config{
//		Consumer:    cons, // a jetstream.Consumer (pull, explicit ack)
//		Handler:     handle,
//		Concurrency: 32,
//		Conn:        nc, // drained once the worker is done; nil if shared
//	})
//	if err != nil { ... }
//	os.Exit(drainkit.Main(drainkit.WithWorker("orders", w)))
//
// Delivery is at least once, as with JetStream itself: a message is acked
// only after its handler returned nil, and the ack is confirmed by the
// server (DoubleAck) before the unit counts as done. What drainkit removes is
// the redelivery a restart causes: a drained replica acks everything it
// started, unless a handler outlives drain.timeout.
//
// Out of scope: push consumers, ordered consumers, and creating streams or
// consumers; handlers that need more than the consumer's AckWait call
// msg.InProgress themselves.
package natsdrain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/drainkit/drainkit/workdrain"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Handler processes one message. ctx is the unit's context: cancelled with
// cause workdrain.ErrDrainTimeout when drain.timeout runs out, never at the
// stop, so a handler finishes the message it took. Returning nil acks the
// message; an error (or a panic) naks it for redelivery. A handler must not
// ack or nak the message itself.
type Handler func(ctx context.Context, msg jetstream.Msg) error

// Config configures New. Consumer and Handler are required.
type Config struct {
	// Consumer is the JetStream pull consumer to fetch from, with explicit
	// acks. Its MaxAckPending should allow replicas x Concurrency.
	Consumer jetstream.Consumer
	// Handler processes each message.
	Handler Handler
	// StopAt is the drain phase at which pulling stops (default
	// workdrain.AtDrainStart; workdrain.AtWindowEnd for a process that also
	// serves requests which enqueue its work).
	StopAt workdrain.Phase
	// Concurrency is how many messages the worker holds and processes at
	// once (default 1, at most 65536). It never pulls more than it has free
	// handlers for, so nothing waits in a buffer when the drain starts.
	Concurrency int
	// FetchMaxWait bounds each pull request (default 500ms, between 10ms and
	// 1m). The stop waits for the pending pull to expire, at most this long,
	// and naks what it delivers.
	FetchMaxWait time.Duration
	// AckTimeout bounds each ack's confirmation by the server (default 5s,
	// > 0 and at most 1m).
	AckTimeout time.Duration
	// Conn, if set, is drained (nats.Conn.Drain: flush, then close) once
	// every message was acked or nak'ed, and the worker waits for it to
	// close, so the naks leave the process before it exits. Leave it nil for
	// a connection that other code still uses, and drain it in a stop hook.
	Conn *nats.Conn
	// Logger receives one warning per message force-cancelled at
	// drain.timeout and one per failed ack (default slog.Default()).
	Logger *slog.Logger
}

// New returns a workdrain.Worker that consumes c.Consumer (add it with
// drainkit.WithWorker or Lifecycle.AddServer), or an error naming the first
// field out of range.
func New(c Config) (*workdrain.Worker, error) {
	if err := c.defaults(); err != nil {
		return nil, err
	}
	return workdrain.New(c.StopAt, c.run), nil
}

func (c *Config) defaults() error {
	switch {
	case c.Consumer == nil:
		return errors.New("natsdrain: Config.Consumer is required")
	case c.Handler == nil:
		return errors.New("natsdrain: Config.Handler is required")
	case c.Concurrency < 0 || c.Concurrency > 65536:
		return fmt.Errorf("natsdrain: Config.Concurrency %d out of range: 1 to 65536 (0 means 1)", c.Concurrency)
	case c.FetchMaxWait != 0 && (c.FetchMaxWait < 10*time.Millisecond || c.FetchMaxWait > time.Minute):
		return fmt.Errorf("natsdrain: Config.FetchMaxWait %s out of range: 10ms to 1m (0 means 500ms)", c.FetchMaxWait)
	case c.AckTimeout < 0 || c.AckTimeout > time.Minute:
		return fmt.Errorf("natsdrain: Config.AckTimeout %s out of range: > 0 and <= 1m (0 means 5s)", c.AckTimeout)
	case c.StopAt != workdrain.AtDrainStart && c.StopAt != workdrain.AtWindowEnd:
		return fmt.Errorf("natsdrain: Config.StopAt %d is not a workdrain.Phase", c.StopAt)
	}
	if c.Concurrency == 0 {
		c.Concurrency = 1
	}
	if c.FetchMaxWait == 0 {
		c.FetchMaxWait = 500 * time.Millisecond
	}
	if c.AckTimeout == 0 {
		c.AckTimeout = 5 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}
