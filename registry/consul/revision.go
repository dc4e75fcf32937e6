package consul

import (
	"encoding/json"
	"hash/maphash"

	"github.com/drainkit/drainkit/registry"
)

// maxSeen is how many answers of the current epoch revisions remembers to
// recognise a replay: the latest distinct indexes, 16 bytes each. A replay
// of an answer older than that is taken as an index reset.
const maxSeen = 256

// revisions orders the successful answers of one poller (one Watch call)
// into registry.View epochs, and tells an index reset from a replay. Consul's
// blocking-query guidance says to start again from index 0 whenever the
// X-Consul-Index goes backwards; that alone cannot tell the two apart:
//
//   - a reset: the agent or the servers lost their state or restored an
//     older snapshot, and their index sequence started again below the last
//     one. The answer is the registry's current truth and starts a new epoch
//     (so that a consumer ordering by (Epoch, Revision) takes it).
//   - a replay: an answer already taken comes back after a later one
//     superseded it (a proxy or cache in front of Consul serving a recorded
//     answer, a stale read). Taking it would bring back instances removed
//     since, a drained one included, until the next answer.
//
// The rule: an answer whose index is below the last one's is a replay when
// it has the same index and the same instances (ID, address, port, tags,
// meta and endpoints: registry.Instance.Equal) as an answer taken earlier
// in the current epoch, and no query failed since the last answer taken; it
// is dropped (not delivered, the epoch and the last index stay). Any other
// answer with a lower index is a reset: a new epoch starts with it, and the
// answers of the old one are forgotten, since a restarted agent repeats its
// indexes (a dev agent or a fresh data dir re-registering the same
// instances reaches the same index with the same instances). After a failed
// query a lower index is always a reset: the agent may have restarted in
// between, and its answer may repeat an old one because it is the truth
// again. Limits: a replay of an answer older than the last maxSeen answers,
// of an answer from an earlier epoch, or coming right after a failed query
// is taken as a reset.
//
// The zero value is ready: epoch 0, no answer yet.
type revisions struct {
	epoch  uint64 // registry.View.Epoch of the answers taken
	last   uint64 // the index of the last answer taken
	taken  bool   // an answer was taken
	failed bool   // a query failed since the last answer taken
	seen   []seenAnswer
}

// seenAnswer is one answer of the current epoch: its index and the
// fingerprint of its instances.
type seenAnswer struct {
	index uint64
	sum   uint64
}

// take classifies a successful answer with this X-Consul-Index and
// fingerprint (see fingerprint) and returns the epoch its view carries and
// whether it is a replay, to be dropped.
func (r *revisions) take(index, sum uint64) (epoch uint64, replay bool) {
	switch {
	case !r.taken || index >= r.last:
		r.remember(index, sum)
	case !r.failed && r.seenBefore(index, sum):
		return r.epoch, true
	default: // the index went backwards: a reset
		r.epoch++
		r.seen = r.seen[:0]
		r.remember(index, sum)
	}
	r.last, r.taken, r.failed = index, true, false
	return r.epoch, false
}

// fail records a failed query: the next answer with a lower index is a
// reset whatever it lists.
func (r *revisions) fail() { r.failed = true }

// remember records an answer of the current epoch; an answer at the index
// of the last one seen replaces it (a blocking query that timed out answers
// with the same index).
func (r *revisions) remember(index, sum uint64) {
	if n := len(r.seen); n > 0 && r.seen[n-1].index == index {
		r.seen[n-1].sum = sum
		return
	}
	if len(r.seen) == maxSeen {
		r.seen = append(r.seen[:0], r.seen[1:]...)
	}
	r.seen = append(r.seen, seenAnswer{index, sum})
}

func (r *revisions) seenBefore(index, sum uint64) bool {
	for _, s := range r.seen {
		if s.index == index {
			return s.sum == sum
		}
	}
	return false
}

// seed keys fingerprints; they are compared only within this process.
var seed = maphash.MakeSeed()

// fingerprint returns a 64-bit hash of ins, a sorted instance list, that is
// equal for two lists whose instances are pairwise registry.Instance.Equal:
// the hash of their JSON encoding, which carries every field Equal compares
// (nil and empty tags or meta alike) and sorts meta keys.
func fingerprint(ins []registry.Instance) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	// Encoding strings, ints and maps of strings cannot fail, and
	// maphash.Hash's Write never does.
	_ = json.NewEncoder(&h).Encode(ins)
	return h.Sum64()
}
