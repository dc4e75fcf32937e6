package probes

import (
	"sync"
	"sync/atomic"
	"time"
)

// watchdog ticks every interval by calling probe; liveness fails when the last
// completed tick is older than threshold. A probe that blocks (a deadlocked
// lifecycle) stops the ticks.
type watchdog struct {
	interval, threshold time.Duration
	probe               func()

	start time.Time    // monotonic origin
	last  atomic.Int64 // offset of the last completed tick from start, ns

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

func newWatchdog(interval, threshold time.Duration, probe func()) *watchdog {
	w := &watchdog{
		interval:  interval,
		threshold: threshold,
		probe:     probe,
		start:     time.Now(),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	go w.run()
	return w
}

func (w *watchdog) run() {
	defer close(w.done)
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		w.probe()
		w.last.Store(int64(time.Since(w.start)))
	}
}

// age returns how long ago the last tick completed (the creation counts as a
// tick).
func (w *watchdog) age() time.Duration {
	return time.Since(w.start) - time.Duration(w.last.Load())
}

// healthy reports whether the last tick is recent enough, and its age.
func (w *watchdog) healthy() (bool, time.Duration) {
	a := w.age()
	return a <= w.threshold, a
}

// close stops the goroutine and waits for it. Idempotent. If probe is blocked
// forever, close blocks too: that is the deadlock the watchdog reports.
func (w *watchdog) close() {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.done
}
