package drill

import "time"

// runFixture is the shared fixture of the scenario tests in this package:
// a StrategyRun built request by request and fault by fault, for summary,
// event and verdict tests, so that each test states only what it is about.
// Offsets count from the run's start; the run lasts 10 s with load from 0
// to 9 s unless a test changes fix.Run.
type runFixture struct {
	Run StrategyRun
}

// newRunFixture starts a run of scenario by strategy, with no request,
// replica or event yet.
func newRunFixture(scenario, strategy string) *runFixture {
	return &runFixture{Run: StrategyRun{Scenario: scenario, Name: strategy, Duration: 10 * time.Second, LoadEnd: 9 * time.Second}}
}

// requests adds one request to replica per offset in at (due and sent
// then, ended at once) with outcome o; failures get err as their text.
func (f *runFixture) requests(replica int, o Outcome, err string, at ...time.Duration) *runFixture {
	for _, a := range at {
		r := Record{Start: a, Sent: a, End: a, Replica: replica, Outcome: o}
		if o.Failed() {
			r.Err = err
		}
		f.Run.Records = append(f.Run.Records, r)
	}
	return f
}

// event adds a fault of kind to replica at fault: every instant negative
// (did not happen) until set, if non-nil, fills some in.
func (f *runFixture) event(kind string, replica int, fault time.Duration, set func(e *Event)) *runFixture {
	e := Event{Kind: kind, Replica: replica, Fault: fault, Decision: -1, ConsumerView: -1, Ejection: -1, LastSent: -1, FirstSent: -1, Ready: -1}
	if set != nil {
		set(&e)
	}
	f.Run.Events = append(f.Run.Events, e)
	return f
}

// summary summarizes the run under cfg (DefaultConfig when zero).
func (f *runFixture) summary(cfg Config) Summary {
	if cfg.Replicas == 0 {
		cfg = DefaultConfig()
	}
	return Summarize(cfg, f.Run)
}
