package drill

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Event is one fault a scenario inflicted on a replica, with the four
// instants an operator asks about. Offsets count from the run's start; a
// negative one means it did not happen (before the load stopped).
//
// A fault removes the replica (a stop, a kill), or, with Added, adds one
// (a start under load, ScenarioWarmup): then Decision and ConsumerView are
// the first answer and view that list it, and FirstSent and Ready say
// whether a request came before it was READY.
type Event struct {
	// Kind names the fault: "SIGTERM", "preStop", "SIGKILL", "start".
	Kind    string
	Replica int
	Added   bool
	// Fault is when the drill inflicted it.
	Fault time.Duration
	// Decision is when the discovery (the readiness probes or the
	// registry's watch) first published an answer without the replica, and
	// DecisionRevision that answer's revision (Consul's index, etcd's
	// revision, the probes' change count).
	Decision         time.Duration
	DecisionRevision uint64
	// ConsumerView is when the first consumer's view of the instances no
	// longer held the replica (sampled every 10 ms; a consumer's own
	// ejection does not count), and ConsumerRevision that view's revision.
	ConsumerView     time.Duration
	ConsumerRevision uint64
	// Ejection is when a consumer first ejected an instance after the
	// fault (drainkit consumers only; negative for none).
	Ejection time.Duration
	// LastSent is the last request a consumer sent toward the replica's
	// address, a refused dial or a try it then resent elsewhere included
	// (negative for none after the fault).
	LastSent time.Duration
	// FirstSent is the first request sent toward an added replica, Ready
	// its READY (its own log line, else the drill's first /readyz 200),
	// and Early counts the requests sent toward it before Ready.
	FirstSent time.Duration
	Ready     time.Duration
	Early     int
}

// viewLister is a Client whose view of the instances can be read apart
// from its own ejections, with the view's revision.
type viewLister interface {
	ViewListed() (addrs []string, revision uint64)
}

// eventTracker samples the consumers' views after each fault until every
// one of them has dropped the faulted replica, noting the first consumer
// view without it and the first ejection.
type eventTracker struct {
	start   time.Time
	disc    Discovery
	clients []Client

	ctx    context.Context // ends the sampling (finish)
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	events []*Event
}

// sampleEvery is how often the tracker reads the consumers' views.
const sampleEvery = 10 * time.Millisecond

func newEventTracker(start time.Time, disc Discovery, clients []Client) *eventTracker {
	ctx, cancel := context.WithCancel(context.Background())
	return &eventTracker{start: start, disc: disc, clients: clients, ctx: ctx, cancel: cancel}
}

// fault records that kind was inflicted on r at, and samples the
// consumers' views until one dropped r (and, with consumers that eject,
// one ejected an instance) or finish is called.
func (t *eventTracker) fault(kind string, r *Replica, at time.Time) {
	t.track(&Event{Kind: kind, Replica: r.ID, Fault: at.Sub(t.start)}, r.consumerAddr())
}

// added records that r was started at, and samples the consumers' views
// until one lists it or finish is called.
func (t *eventTracker) added(kind string, r *Replica, at time.Time) {
	t.track(&Event{Kind: kind, Replica: r.ID, Added: true, Fault: at.Sub(t.start)}, r.consumerAddr())
}

// track samples the consumers' views for ev, an event on the replica at
// addr.
func (t *eventTracker) track(ev *Event, addr string) {
	ev.Decision, ev.ConsumerView, ev.Ejection, ev.LastSent, ev.FirstSent, ev.Ready = -1, -1, -1, -1, -1, -1
	t.mu.Lock()
	t.events = append(t.events, ev)
	t.mu.Unlock()
	ej0 := t.ejections()
	t.wg.Go(func() {
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		for {
			now := time.Now()
			t.mu.Lock()
			if ev.Ejection < 0 && t.ejections() > ej0 {
				ev.Ejection = now.Sub(t.start)
			}
			if ev.ConsumerView < 0 {
				if rev, ok := t.firstView(addr, !ev.Added); ok {
					ev.ConsumerView, ev.ConsumerRevision = now.Sub(t.start), rev
				}
			}
			done := ev.ConsumerView >= 0 && (ev.Added || ev.Ejection >= 0 || !t.anyEjects())
			t.mu.Unlock()
			if done {
				return
			}
			select {
			case <-t.ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
}

// seen reports whether some consumer's view dropped every faulted replica.
func (t *eventTracker) seen() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ev := range t.events {
		if ev.ConsumerView < 0 {
			return false
		}
	}
	return true
}

// ejections sums the consumers' ejections.
func (t *eventTracker) ejections() int64 {
	var n int64
	for _, c := range t.clients {
		n += c.Stats().Ejections
	}
	return n
}

// anyEjects reports whether some consumer ejects instances at all.
func (t *eventTracker) anyEjects() bool {
	for _, c := range t.clients {
		if _, ok := c.(viewLister); ok {
			return true
		}
	}
	return false
}

// firstView returns the revision of the view of the first consumer that no
// longer lists addr (gone), or lists it (!gone): its own for a viewLister,
// else the discovery's current one (a naive consumer's list is a copy of a
// discovery answer).
func (t *eventTracker) firstView(addr string, gone bool) (uint64, bool) {
	for _, c := range t.clients {
		if vl, ok := c.(viewLister); ok {
			addrs, rev := vl.ViewListed()
			if slices.Contains(addrs, addr) != gone {
				return rev, true
			}
			continue
		}
		if slices.Contains(c.Listed(), addr) != gone {
			return t.disc.revision(), true
		}
	}
	return 0, false
}

// finish stops sampling and completes the events from the discovery's
// history, the records and ready, the replicas' READY offsets: the
// registry's decision, the last request sent to each faulted replica, and
// for added ones the first request and those before READY.
func (t *eventTracker) finish(records []Record, ready func(id int) time.Duration) []Event {
	t.cancel()
	t.wg.Wait()
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Event, len(t.events))
	for i, ev := range t.events {
		e := *ev
		if at, rev, ok := t.disc.answered(e.Replica, t.start.Add(e.Fault), e.Added); ok {
			e.Decision, e.DecisionRevision = at.Sub(t.start), rev
		}
		if e.Added {
			e.Ready = ready(e.Replica)
		}
		for _, r := range records {
			if r.Replica != e.Replica && r.FirstTry != e.Replica || r.Sent < e.Fault {
				continue
			}
			e.LastSent = max(e.LastSent, r.Sent)
			if e.FirstSent < 0 || r.Sent < e.FirstSent {
				e.FirstSent = r.Sent
			}
			if e.Added && (e.Ready < 0 || r.Sent < e.Ready) {
				e.Early++
			}
		}
		if e.Added {
			e.LastSent = -1 // nothing old about it
		} else {
			e.FirstSent = -1
		}
		out[i] = e
	}
	return out
}

// EventSummary is one Event as the table, the JSON and the HTML report show
// it: times in seconds from the run's start (_s), null when the instant did
// not happen before the load stopped. For an added replica (Added, a
// "start") the registry's decision and the consumer view are the first
// that list it.
type EventSummary struct {
	Kind    string `json:"kind"`
	Replica int    `json:"replica"`
	Added   bool   `json:"added,omitempty"`
	// FaultSeconds is when the drill inflicted the fault.
	FaultSeconds float64 `json:"fault_s"`
	// RegistryDecisionSeconds is the discovery's first answer without the
	// replica (readiness probes dropping it, the registry's watch delivering
	// its deregistration or expiry), RegistryRevision that answer's revision.
	RegistryDecisionSeconds *float64 `json:"registry_decision_s"`
	RegistryRevision        *uint64  `json:"registry_decision_revision"`
	// ConsumerViewSeconds is the first consumer view without the replica,
	// ConsumerRevision its revision.
	ConsumerViewSeconds *float64 `json:"first_consumer_view_without_s"`
	ConsumerRevision    *uint64  `json:"first_consumer_view_revision"`
	// EjectionSeconds is a consumer's first ejection after the fault.
	EjectionSeconds *float64 `json:"first_ejection_s"`
	// LastSentSeconds is the last request sent to the replica's address.
	LastSentSeconds *float64 `json:"last_request_to_old_address_s"`
	// FirstSentSeconds is the first request sent toward an added replica,
	// ReadySeconds its READY, EarlyRequests the requests sent toward it
	// before READY (ScenarioWarmup wants none).
	FirstSentSeconds *float64 `json:"first_request_to_new_address_s,omitempty"`
	ReadySeconds     *float64 `json:"ready_s,omitempty"`
	EarlyRequests    int      `json:"requests_before_ready"`
	// FailuresPerSecond counts the failed requests (by when they were due)
	// in whole seconds from the fault, up to the second holding the last of
	// the instants; Failed is their sum.
	FailuresPerSecond []int `json:"failures_per_second"`
	Failed            int   `json:"failed"`
}

// summarizeEvents turns run's events into their summaries.
func summarizeEvents(run StrategyRun) []EventSummary {
	out := make([]EventSummary, 0, len(run.Events))
	for _, e := range run.Events {
		es := EventSummary{
			Kind: e.Kind, Replica: e.Replica, Added: e.Added, FaultSeconds: secs(e.Fault),
			FirstSentSeconds: optSecs(e.FirstSent), ReadySeconds: optSecs(e.Ready), EarlyRequests: e.Early,
			RegistryDecisionSeconds: optSecs(e.Decision), ConsumerViewSeconds: optSecs(e.ConsumerView),
			EjectionSeconds: optSecs(e.Ejection), LastSentSeconds: optSecs(e.LastSent),
		}
		if e.Decision >= 0 {
			es.RegistryRevision = &e.DecisionRevision
		}
		if e.ConsumerView >= 0 {
			es.ConsumerRevision = &e.ConsumerRevision
		}
		end := max(e.Fault, e.Decision, e.ConsumerView, e.Ejection, e.LastSent, e.FirstSent, e.Ready)
		if e.Added { // a replica listed too early fails until it is warm
			for _, r := range run.Records {
				if r.Outcome.Failed() && (r.Replica == e.Replica || r.FirstTry == e.Replica) {
					end = max(end, r.Start)
				}
			}
		}
		es.FailuresPerSecond = make([]int, int((end-e.Fault)/time.Second)+1)
		for _, r := range run.Records {
			if !r.Outcome.Failed() || r.Start < e.Fault || r.Start >= e.Fault+time.Duration(len(es.FailuresPerSecond))*time.Second {
				continue
			}
			es.FailuresPerSecond[(r.Start-e.Fault)/time.Second]++
			es.Failed++
		}
		out = append(out, es)
	}
	return out
}

// instant renders an optional time for the table: "1.23", or "-".
func instant(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *v)
}

// addressRequests renders the requests toward the event's address for the
// table: "4.25" (the last to the old address), or "first 5.10, READY 5.02,
// 0 before" for an added replica.
func (e EventSummary) AddressRequests() string {
	if !e.Added {
		return instant(e.LastSentSeconds)
	}
	return fmt.Sprintf("first %s, READY %s, %d before", instant(e.FirstSentSeconds), instant(e.ReadySeconds), e.EarlyRequests)
}

// revisioned renders an instant with its revision: "1.23 (rev 42)".
func revisioned(v *float64, rev *uint64) string {
	if v == nil || rev == nil {
		return instant(v)
	}
	return fmt.Sprintf("%.2f (rev %d)", *v, *rev)
}
