package drill

import (
	"context"
	"time"
)

// grpcStreamHold is how long one gRPC stream of ScenarioLongLived is held
// before the client opens the next; a drain in between ends it cleanly and
// the consumer re-opens it for the rest of the hold (newGRPCClient).
const grpcStreamHold = 3 * time.Second

// startGRPC starts streamsPerKind gRPC streams for consumer consumerID,
// through one gRPC consumer of the run's kind over disc. They do not hold
// awaitOpen up: a stream's first message is not observable from outside
// the consumer, and the HTTP streams already wait for the replicas.
func (st *streamSet) startGRPC(ctx context.Context, consumerID int, disc Discovery) error {
	s := st.s
	c, err := newGRPCClient(s.cfg.ConsumerKind, ClientConfig{ID: consumerID, Service: s.cfg.serviceName(s.name), Views: disc, Endpoints: disc,
		Timeout: grpcStreamHold + s.cfg.RequestTimeout, Dial: drillDialer}, grpcStreamHold)
	if err != nil {
		return err
	}
	st.grpc = append(st.grpc, c)
	for range streamsPerKind {
		st.sums[StreamGRPC].Streams++
		st.wg.Go(func() { st.grpcLoop(ctx, consumerID, c) })
	}
	return nil
}

// grpcLoop holds one gRPC stream after another on c until ctx ends; each
// hold is recorded as one request, its re-opens (the drain signal) as its
// retries.
func (st *streamSet) grpcLoop(ctx context.Context, consumerID int, c Client) {
	rec := st.s.recorder()
	for ctx.Err() == nil {
		sent := time.Now()
		cctx, cancel := context.WithTimeout(ctx, grpcStreamHold+st.s.cfg.RequestTimeout)
		att := c.Do(cctx, Request{})
		cancel()
		if ctx.Err() != nil { // closed by the drill at the end
			att.Err = nil
		}
		r := Record{Start: rec.Offset(sent), Sent: rec.Offset(sent), End: rec.Offset(time.Now()), Consumer: consumerID,
			Replica: st.s.replicaOf(att.Addr), Outcome: Classify(0, att.Err), Retries: att.Retries}
		if first := st.s.replicaOf(att.FirstAddr); first != r.Replica {
			r.FirstTry = first
		}
		if att.Err != nil {
			r.Err = StreamGRPC + ": " + att.Err.Error()
		}
		rec.Add(r)
		st.mu.Lock()
		k := st.sums[StreamGRPC]
		k.Opened += 1 + att.Retries
		k.DrainEnded += att.Retries
		if att.Retries > 0 && r.FirstTry != 0 {
			k.ReopenedElsewhere++
		}
		if att.Err != nil {
			k.Errors++
			if k.ErrorExample == "" {
				k.ErrorExample = r.Err
			}
		}
		st.mu.Unlock()
	}
}
