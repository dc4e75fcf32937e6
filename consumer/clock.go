package consumer

import "time"

// monoClock reads this process's monotonic clock as the time since its
// origin, as probes' watchdog does: an NTP step of the wall clock moves
// neither its readings nor the durations taken from them. A reading is
// never 0 (0 marks "unset" in the atomics that store readings).
type monoClock struct{ origin time.Time }

// newMonoClock returns a clock whose origin is 1ns before now, so that its
// readings are never 0.
func newMonoClock() monoClock { return monoClock{origin: time.Now().Add(-time.Nanosecond)} }

// now returns the current reading.
func (c monoClock) now() time.Duration { return c.at(time.Now()) }

// at returns the reading of t, a time.Now() value taken after the clock was
// made (Sub then uses the monotonic readings); at least 1ns regardless.
func (c monoClock) at(t time.Time) time.Duration { return max(t.Sub(c.origin), time.Nanosecond) }
