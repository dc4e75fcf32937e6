package consul

import (
	"context"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/registry"
	"github.com/hashicorp/consul/api"
)

// poller runs the blocking queries on /v1/health/service/<service>?passing
// that both Watch and Registrar.Confirm are made of, one at a time, following
// Consul's blocking-query rules (see nextIndex):
//
//   - after a successful answer the next query waits on its index, for at
//     most wait; answers that came back at once are spaced minQueryInterval
//     apart, so the loop never spins;
//   - after a failed query it waits a jittered, exponentially growing backoff,
//     and the next query does not block (index 0): it answers as soon as the
//     agent does, so recovery is seen at once, not after a whole wait;
//   - every query is bounded (queryMargin beyond its longest expected time),
//     so a hung agent shows as an error;
//   - an index below the last answer's either starts a new epoch (a reset)
//     or marks the answer a replay of one already taken (see revisions).
type poller struct {
	client  *api.Client
	service string
	tag     string
	base    api.QueryOptions // further options; WaitIndex and WaitTime are set per query
	wait    time.Duration
	bo      syncx.Backoff
	idx     uint64 // the index to wait on next
	failed  bool   // the last query failed: the next one does not block
	revs    revisions
}

// answer is the outcome of one query.
type answer struct {
	entries   []*api.ServiceEntry
	instances []registry.Instance // entries as consumers see them; nil after an error
	index     uint64              // X-Consul-Index
	epoch     uint64              // the epoch of a successful answer's view
	replay    bool                // a replay of an answer already taken: to be dropped
	at        time.Time           // when the answer (or the error) arrived
	err       error
}

// run queries until each returns false (run then returns nil) or ctx is done
// (run returns ctx.Err() without calling each for the interrupted query).
func (p *poller) run(ctx context.Context, each func(answer) bool) error {
	for {
		start := time.Now()
		a := p.query(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !each(a) {
			return nil
		}
		if err := syncx.Sleep(ctx, p.pause(a, start)); err != nil {
			return err
		}
	}
}

// queryMargin is added to a query's longest expected duration (its wait plus
// Consul's jitter of up to wait/16) to bound it: a hung agent (SIGSTOP, a
// black-holed connection) shows as an error instead of a query that never
// returns.
const queryMargin = 5 * time.Second

func (p *poller) query(ctx context.Context) answer {
	q := p.base
	q.WaitIndex, q.WaitTime = p.idx, p.wait
	limit := queryMargin + p.wait + p.wait/16
	if p.failed {
		q.WaitIndex, limit = 0, queryMargin
	}
	qctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	entries, meta, err := p.client.Health().Service(p.service, p.tag, true, q.WithContext(qctx))
	a := answer{entries: entries, at: time.Now(), err: err}
	if meta != nil {
		a.index = meta.LastIndex
	}
	if err != nil {
		p.revs.fail()
		return a
	}
	// An index lower than the last answer's starts a new epoch before
	// anyone sees the answer, unless the answer is a replay of one already
	// taken (see revisions).
	a.instances = instances(entries)
	a.epoch, a.replay = p.revs.take(a.index, fingerprint(a.instances))
	return a
}

// pause records a's index and returns how long to wait before the next
// query. A replay restarts the blocking loop from 0 as a reset does
// (nextIndex): the next query answers at once with the registry's current
// index.
func (p *poller) pause(a answer, start time.Time) time.Duration {
	p.failed = a.err != nil
	if a.err != nil {
		return p.bo.Next()
	}
	p.bo.Reset()
	next, reset := nextIndex(p.idx, a.index)
	if a.replay {
		// A replay's index says nothing of the registry's, even when it is
		// above the index waited on (0 after an earlier replay).
		next, reset = 0, true
	}
	p.idx = next
	if reset || time.Since(start) < minQueryInterval {
		return minQueryInterval - time.Since(start)
	}
	return 0
}
