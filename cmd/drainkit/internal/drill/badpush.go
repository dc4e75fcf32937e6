package drill

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/registry"
)

// badPushHold is how long ScenarioBadPush's faults last: the stale answer
// that followed the drain stays the last one delivered this long after
// the drained replica exited, and the empty answer this long before the
// proxy delivers the good one again.
const badPushHold = time.Second

// badPush is ScenarioBadPush's proxy on the consumers' registry answers:
// every answer is delivered twice (a duplicate), an answer that changes
// the instances is followed by the previous one (a reordered, stale
// answer, with its older revision), and once, on demand, an empty list is
// delivered at the current revision.
type badPush struct {
	relay *viewRelay

	mu         sync.Mutex
	prev       *relayed // the last good answer, nil before the first
	duplicated int
	reordered  int
	empty      int
	emptyAt    time.Time
	emptyEnd   time.Time
}

// BadPushStats is what ScenarioBadPush's proxy did to the consumers'
// answers: how many it duplicated, reordered (a stale answer delivered
// after a newer one) and replaced by an empty list, and when the empty
// answer was in force (offsets from the run's start, negative without).
type BadPushStats struct {
	Duplicated, Reordered, Empty int
	EmptyStart, EmptyEnd         time.Duration
}

// newBadPush puts a bad-push proxy between disc and the consumers.
func newBadPush(disc Discovery) (*badPush, error) {
	b := &badPush{}
	r, err := newViewRelay(disc, b.edit)
	if err != nil {
		return nil, fmt.Errorf("bad-push: %w", err)
	}
	b.relay = r
	return b, nil
}

// edit is the relay's hook: m, a duplicate of m, and after a change of
// instances the previous answer again. Errors pass as they are.
func (b *badPush) edit(m relayed) []relayed {
	if m.view.Err != nil {
		return []relayed{m}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	dup := m
	dup.view.Received = time.Now() // received again: not the same delivery
	out := []relayed{m, dup}
	b.duplicated++
	if b.prev != nil && (b.prev.view.Revision != m.view.Revision || b.prev.view.Epoch != m.view.Epoch) {
		out = append(out, *b.prev)
		b.reordered++
	}
	b.prev = &m
	return out
}

// answerEmpty delivers an empty list at the last good answer's revision,
// for badPushHold, then the good answer again.
func (b *badPush) answerEmpty(ctx context.Context) error {
	b.mu.Lock()
	prev := b.prev
	b.mu.Unlock()
	if prev == nil {
		return errors.New("bad-push: no answer to replace with an empty list yet")
	}
	empty := *prev
	empty.view.Instances, empty.view.Received, empty.eps = []registry.Instance{}, time.Now(), []Endpoint{}
	b.mu.Lock()
	b.empty++
	b.emptyAt = time.Now()
	b.mu.Unlock()
	b.relay.publish(empty)
	err := syncx.Sleep(ctx, badPushHold)
	b.mu.Lock()
	good := *b.prev // the latest good answer, which may have changed meanwhile
	good.view.Received = time.Now()
	b.duplicated++
	b.emptyEnd = time.Now()
	b.mu.Unlock()
	b.relay.publish(good)
	return err
}

// stats returns what the proxy did so far, offsets from start.
func (b *badPush) stats(start time.Time) BadPushStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := BadPushStats{Duplicated: b.duplicated, Reordered: b.reordered, Empty: b.empty, EmptyStart: -1, EmptyEnd: -1}
	if !b.emptyAt.IsZero() {
		st.EmptyStart = b.emptyAt.Sub(start)
	}
	if !b.emptyEnd.IsZero() {
		st.EmptyEnd = b.emptyEnd.Sub(start)
	}
	return st
}

// badPushed is ScenarioBadPush's consumer discovery: the proxy on disc.
func (s *strategyRun) badPushed(disc Discovery) (Discovery, error) {
	b, err := newBadPush(disc)
	if err != nil {
		return nil, err
	}
	s.push = b
	return b.relay, nil
}

// badPushFault is ScenarioBadPush: under the proxy, one replica is
// replaced (the rolling restart's way: a new one listed, the old one
// drained and stopped); the stale answer that lists it again stays the
// last one delivered until badPushHold after its exit; then the proxy
// answers an empty list once, for badPushHold.
func (s *strategyRun) badPushFault(ctx context.Context, disc Discovery, initial []*Replica) error {
	if s.push == nil {
		return errors.New("bad-push: no proxy between the discovery and the consumers")
	}
	if err := s.rolling(ctx, disc, initial[:1]); err != nil {
		return err
	}
	s.st.set("bad push: the stale answer stays")
	if err := syncx.Sleep(ctx, badPushHold); err != nil {
		return err
	}
	s.st.set("bad push: an empty answer (%s)", badPushHold)
	return s.push.answerEmpty(ctx)
}

// BadPushSummary is ScenarioBadPush's findings: what the proxy did, and
// what reached the consumers. Times in seconds from the run's start.
type BadPushSummary struct {
	Duplicated int `json:"duplicated_answers"`
	Reordered  int `json:"reordered_answers"`
	Empty      int `json:"empty_answers"`
	// EmptyStartSeconds and EmptyEndSeconds bound the empty answer.
	EmptyStartSeconds *float64 `json:"empty_answer_start_s"`
	EmptyEndSeconds   *float64 `json:"empty_answer_end_s"`
	// FailedDuringEmpty counts the requests due while the empty answer was
	// the last one delivered that failed: with the last good view kept,
	// none.
	FailedDuringEmpty int `json:"failed_during_empty_answer"`
	// SentAfterExit counts the requests sent toward a drained replica
	// after it exited (a stale answer followed): none may be.
	SentAfterExit int `json:"sent_to_drained_after_exit"`
}

// summarizeBadPush returns run's bad-push findings, nil for other
// scenarios.
func summarizeBadPush(run StrategyRun) *BadPushSummary {
	st := run.BadPush
	if st == nil {
		return nil
	}
	out := &BadPushSummary{Duplicated: st.Duplicated, Reordered: st.Reordered, Empty: st.Empty,
		EmptyStartSeconds: optSecs(st.EmptyStart), EmptyEndSeconds: optSecs(st.EmptyEnd)}
	exited := map[int]time.Duration{}
	for _, rp := range run.Replicas {
		if rp.Rolled && rp.Exited >= 0 {
			exited[rp.ID] = rp.Exited
		}
	}
	for _, r := range run.Records {
		if r.Outcome.Failed() && st.EmptyStart >= 0 && r.Start >= st.EmptyStart && (st.EmptyEnd < 0 || r.Start < st.EmptyEnd) {
			out.FailedDuringEmpty++
		}
		for _, id := range []int{r.Replica, r.FirstTry} {
			if at, ok := exited[id]; ok && r.Sent > at {
				out.SentAfterExit++
				break
			}
		}
	}
	return out
}

// badPushVerdict explains a ScenarioBadPush run: failures, what the proxy
// did, and whether a drained replica was sent requests after its exit or
// the empty answer failed requests.
func badPushVerdict(s Summary) string {
	b := s.BadPush
	if b == nil {
		return fmt.Sprintf("ERROR: no bad-push findings (%d of %d requests failed)", s.Failed, s.Requests)
	}
	did := fmt.Sprintf("the proxy duplicated %d, reordered %d and emptied %d answer(s)", b.Duplicated, b.Reordered, b.Empty)
	if b.EmptyStartSeconds != nil && b.EmptyEndSeconds != nil {
		did += fmt.Sprintf(" (the empty one from %.2fs to %.2fs)", *b.EmptyStartSeconds, *b.EmptyEndSeconds)
	}
	var drained string
	for _, e := range s.Events {
		drained += fmt.Sprintf("; r%d was drained at %.2fs, dropped by the discovery at %s, last sent a request at %s",
			e.Replica, e.FaultSeconds, instant(e.RegistryDecisionSeconds), instant(e.LastSentSeconds))
	}
	if s.Pass {
		return fmt.Sprintf("PASS: 0 of %d requests failed: the last good view survived the empty answer and no request went to a drained instance after it exited; %s%s",
			s.Requests, did, drained)
	}
	var why []string
	if b.SentAfterExit > 0 {
		why = append(why, fmt.Sprintf("%s sent to a drained instance after it exited (a stale, reordered answer followed)",
			plural(int64(b.SentAfterExit), "request was", "requests were")))
	}
	if b.FailedDuringEmpty > 0 {
		why = append(why, fmt.Sprintf("%s failed while the empty answer was the last (the last good view was dropped)",
			plural(int64(b.FailedDuringEmpty), "request", "requests")))
	}
	head := fmt.Sprintf("FAIL: %d of %d requests failed (%s)", s.Failed, s.Requests, kindList(s.FailuresByKind))
	for _, w := range why {
		head += "; " + w
	}
	return head + "; " + did + drained
}
