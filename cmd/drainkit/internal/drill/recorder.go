package drill

import (
	"sync"
	"sync/atomic"
	"time"
)

// Record is one request of the load. Times are offsets from the strategy
// run's start (Recorder.Start): Start is when the pacer scheduled the request
// (so a late send cannot hide latency), Sent when it was actually handed to
// the client, End when the outcome was known.
type Record struct {
	Start   time.Duration
	Sent    time.Duration
	End     time.Duration
	Replica int // replica ID of the target, 0 when there was none
	// FirstTry is the replica the consumer first sent the request toward
	// (a refused dial included), when a retry then went to another
	// (Replica); 0 when it is Replica or unknown.
	FirstTry int
	Consumer int
	Outcome  Outcome
	Err      string // the error's text for failures, "" for OK
	// Retries is how often the consumer sent the request again (Attempt).
	Retries int
	// Unanswered is the replica the request was written to in full and got
	// no answer from (0 if none): it may have reached a server and been
	// lost there.
	Unanswered int
	// ViewAge is the age of the consumer's view when it picked the
	// instance (0 when the consumer does not know it).
	ViewAge time.Duration
}

// Recorder keeps every request of one strategy run. It is safe for
// concurrent use; Counts is cheap enough for a progress line.
type Recorder struct {
	start    time.Time
	requests atomic.Int64
	failed   atomic.Int64

	mu      sync.Mutex
	records []Record
}

// NewRecorder returns a Recorder whose offsets count from start.
func NewRecorder(start time.Time) *Recorder {
	return &Recorder{start: start, records: make([]Record, 0, 16384)}
}

// Start is the time offsets count from.
func (r *Recorder) Start() time.Time { return r.start }

// Offset converts an absolute time to an offset from Start.
func (r *Recorder) Offset(t time.Time) time.Duration { return t.Sub(r.start) }

// Add stores one finished request.
func (r *Recorder) Add(rec Record) {
	r.requests.Add(1)
	if rec.Outcome.Failed() {
		r.failed.Add(1)
	}
	r.mu.Lock()
	r.records = append(r.records, rec)
	r.mu.Unlock()
}

// Counts returns the number of finished requests and failures so far.
func (r *Recorder) Counts() (requests, failed int64) {
	return r.requests.Load(), r.failed.Load()
}

// Records returns a copy of all records, in the order they finished.
func (r *Recorder) Records() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Record(nil), r.records...)
}
