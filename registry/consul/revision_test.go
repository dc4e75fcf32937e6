package consul

import (
	"testing"
	"time"

	"github.com/drainkit/drainkit/registry"
)

// TestRevisionsTellResetFromReplay (issue 30 item 11): the revision logic of
// the poller. An answer that repeats one already taken in the epoch (same
// index, same instances) after a later one is a replay and is dropped; any
// other lower index, or a lower index after a failed query, is a reset and
// starts a new epoch. Before the rule, every lower index was a reset, so a
// replayed answer brought a drained instance back.
func TestRevisionsTellResetFromReplay(t *testing.T) {
	xy := []registry.Instance{{ID: "x", Address: "127.0.0.1", Port: 1}, {ID: "y", Address: "127.0.0.1", Port: 2}}
	x := xy[:1]
	xMeta := []registry.Instance{{ID: "x", Address: "127.0.0.1", Port: 1, Meta: map[string]string{"zone": "a"}}}
	// step is one query: an error, or an answer with index and instances,
	// and the verdict wanted.
	type step struct {
		err    bool
		index  uint64
		ins    []registry.Instance
		epoch  uint64
		replay bool
	}
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"steady climb, a timed-out query repeats the index", []step{
			{index: 10, ins: xy}, {index: 10, ins: xy}, {index: 12, ins: x}, {index: 12, ins: x},
		}},
		{"replay of an earlier answer after the deregistration", []step{
			{index: 10, ins: xy}, {index: 12, ins: x},
			{index: 10, ins: xy, replay: true},
			{index: 10, ins: xy, replay: true}, // and again
			{index: 12, ins: x},                // the agent's answer, same epoch
			{index: 13, ins: xy},               // a later change is taken
		}},
		{"replay of the first answer, several answers back", []step{
			{index: 5, ins: xy}, {index: 7, ins: x}, {index: 9, ins: xy}, {index: 11, ins: x},
			{index: 5, ins: xy, replay: true}, {index: 9, ins: xy, replay: true}, {index: 7, ins: x, replay: true},
		}},
		{"a lower index never seen is a reset", []step{
			{index: 10, ins: xy}, {index: 12, ins: x},
			{index: 11, ins: xy, epoch: 1},
			{index: 12, ins: xy, epoch: 1},
		}},
		{"a seen index with other instances is a reset", []step{
			{index: 10, ins: xy}, {index: 12, ins: x},
			{index: 10, ins: x, epoch: 1},
		}},
		{"other meta is other instances", []step{
			{index: 10, ins: x}, {index: 12, ins: xy},
			{index: 10, ins: xMeta, epoch: 1},
		}},
		{"a lower index after a failed query is a reset, even if seen", []step{
			{index: 5, ins: x}, {index: 10, ins: xy}, {index: 12, ins: x},
			{err: true},
			{index: 10, ins: xy, epoch: 1},
			// the old epoch's answers are forgotten: a restarted agent repeats
			// its indexes with the same instances
			{index: 5, ins: x, epoch: 2},
		}},
		{"an error with the index climbing changes nothing", []step{
			{index: 10, ins: xy}, {err: true}, {index: 12, ins: x},
			{index: 10, ins: xy, replay: true},
		}},
		{"a reset's own answers are replayed within the new epoch", []step{
			{index: 50, ins: xy}, {index: 4, ins: xy, epoch: 1}, {index: 6, ins: x, epoch: 1},
			{index: 4, ins: xy, epoch: 1, replay: true},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var r revisions
			for i, s := range c.steps {
				if s.err {
					r.fail()
					continue
				}
				epoch, replay := r.take(s.index, fingerprint(s.ins))
				if epoch != s.epoch || replay != s.replay {
					t.Fatalf("step %d (index %d, %d instances): epoch %d, replay %t; want epoch %d, replay %t",
						i, s.index, len(s.ins), epoch, replay, s.epoch, s.replay)
				}
			}
		})
	}
}

// TestRevisionsForgetBeyondMaxSeen: the memory is bounded; the oldest
// answers are forgotten first, and a replay of one is a reset.
func TestRevisionsForgetBeyondMaxSeen(t *testing.T) {
	var r revisions
	for i := range uint64(maxSeen + 1) {
		r.take(i+1, i)
	}
	if _, replay := r.take(2, 1); !replay {
		t.Fatal("the oldest answer kept is not recognised as a replay")
	}
	if epoch, replay := r.take(1, 0); replay || epoch != 1 {
		t.Fatalf("an answer beyond the memory: epoch %d, replay %t; want a reset to epoch 1", epoch, replay)
	}
	if len(r.seen) != 1 {
		t.Fatalf("a reset kept %d answers of the old epoch", len(r.seen))
	}
}

// TestFingerprintFollowsInstanceEqual: equal lists hash alike (nil and empty
// tags or meta included), and each field Equal compares changes the hash.
func TestFingerprintFollowsInstanceEqual(t *testing.T) {
	base := registry.Instance{ID: "x", Address: "10.0.0.1", Port: 80, Tags: []string{"a"},
		Meta: map[string]string{"k": "v", "j": "w"}, Endpoints: []registry.Endpoint{{Scheme: "grpc", Address: "10.0.0.1", Port: 90}}}
	same := base
	same.Meta = map[string]string{"j": "w", "k": "v"}
	if fingerprint([]registry.Instance{base}) != fingerprint([]registry.Instance{same}) {
		t.Error("equal instances hash differently")
	}
	if fingerprint([]registry.Instance{{ID: "x"}}) != fingerprint([]registry.Instance{{ID: "x", Tags: []string{}, Meta: map[string]string{}}}) {
		t.Error("nil and empty tags and meta hash differently")
	}
	for name, change := range map[string]func(*registry.Instance){
		"id":      func(i *registry.Instance) { i.ID = "y" },
		"address": func(i *registry.Instance) { i.Address = "10.0.0.2" },
		"port":    func(i *registry.Instance) { i.Port = 81 },
		"tags":    func(i *registry.Instance) { i.Tags = []string{"b"} },
		"meta":    func(i *registry.Instance) { i.Meta = map[string]string{"k": "v2", "j": "w"} },
		"endpoint": func(i *registry.Instance) {
			i.Endpoints = []registry.Endpoint{{Scheme: "grpc", Address: "10.0.0.1", Port: 91}}
		},
	} {
		other := base
		change(&other)
		if other.Equal(base) || fingerprint([]registry.Instance{other}) == fingerprint([]registry.Instance{base}) {
			t.Errorf("%s: a changed instance hashes like the original", name)
		}
	}
	if fingerprint(nil) == fingerprint([]registry.Instance{base}) {
		t.Error("an empty list hashes like a listed instance")
	}
}

// TestPauseAfterReplay: after a replay the next query starts from index 0
// and is spaced minQueryInterval from the last, even when an earlier replay
// left the index at 0 (a replay's index must never be waited on: it says
// nothing of the registry's).
func TestPauseAfterReplay(t *testing.T) {
	p := &poller{idx: 12}
	for i, idx := range []uint64{10, 10} {
		start := time.Now()
		if d := p.pause(answer{index: idx, replay: true}, start); p.idx != 0 || d <= 0 || d > minQueryInterval {
			t.Fatalf("replay %d: next index %d, pause %v; want index 0 and a pause of at most %v", i, p.idx, d, minQueryInterval)
		}
	}
}
