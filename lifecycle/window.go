package lifecycle

import (
	"time"

	"github.com/drainkit/drainkit/lifecycle/budget"
)

// windowEnd computes when the propagation window ends. t0 is the drain's
// start, dereg when deregistration finished, last the last late arrival (t0
// if none). The window lasts at least min after dereg, then until no request
// arrived for quiet, and never past t0+max. Min, quiet and max all 0: no window.
func windowEnd(t budget.Timings, t0, dereg, last time.Time) time.Time {
	if t.PropagationMin == 0 && t.PropagationQuiet == 0 && t.PropagationMax == 0 {
		return t0
	}
	end := dereg.Add(t.PropagationMin)
	if t.PropagationQuiet > 0 {
		if q := last.Add(t.PropagationQuiet); q.After(end) {
			end = q
		}
	}
	if limit := t0.Add(t.PropagationMax); end.After(limit) {
		end = limit
	}
	return end
}

// awaitWindow blocks until the propagation window is over. Arrivals can push
// its end later, so it re-evaluates when each timer fires. It counts the late
// arrivals of the window's last second, so that a window cut short by
// propagation.max while requests still arrive is not silent (warnOverrun).
func (l *Lifecycle) awaitWindow(dereg time.Time) {
	t0 := l.t0()
	tm := l.opts.Timings
	limit := t0.Add(tm.PropagationMax)
	// The rate's span: the last second before limit, or the whole window
	// if it is shorter (then every late arrival counts, from t0).
	var spanStart time.Time
	var lateBefore int64 // late arrivals before spanStart
	rateFrom := limit.Add(-rateSpan)
	if !rateFrom.After(t0) {
		spanStart = t0
	}
	snap := time.NewTimer(time.Until(rateFrom))
	defer snap.Stop()
	var timer *time.Timer
	for {
		last := t0.Add(time.Duration(l.lastLate.Load()))
		end := windowEnd(tm, t0, dereg, last)
		d := time.Until(end)
		if d <= 0 {
			if tm.PropagationMax > 0 && end.Equal(limit) && !spanStart.IsZero() {
				l.warnOverrun(l.late.Load()-lateBefore, time.Since(spanStart))
			}
			return
		}
		if timer == nil {
			timer = time.NewTimer(d)
			defer timer.Stop()
		} else {
			timer.Reset(d)
		}
		select {
		case <-timer.C:
		case <-snap.C:
			if spanStart.IsZero() {
				spanStart, lateBefore = time.Now(), l.late.Load()
			}
			// The loop re-arms timer with Reset, which (Go >= 1.23)
			// discards a value it may have sent meanwhile.
		}
	}
}

// rateSpan is the span at the window's end over which the arrival rate of
// the overrun warning is measured.
const rateSpan = time.Second

// warnOverrun logs that the propagation window ended at propagation.max
// while requests still arrived (n in the span before its end, a second
// unless the window is shorter): consumers were still
// routing to the instance, and the requests arriving after the listeners
// close will fail. The setting to raise depends on propagation.quiet: with
// it 0, only min keeps the window open, so raising max alone changes little.
func (l *Lifecycle) warnOverrun(n int64, span time.Duration) {
	if n == 0 || span <= 0 {
		return
	}
	tm := l.opts.Timings
	raise := "propagation.max"
	if tm.PropagationQuiet == 0 {
		raise = "propagation.quiet (so the window waits for arrivals to stop) and propagation.max"
	}
	l.opts.Logger.Warn("drainkit: the propagation window ended at propagation.max while requests were still arriving; "+
		"consumers had not yet noticed the drain",
		"propagation_max_ms", tm.PropagationMax.Milliseconds(), "arrivals", n, "span_ms", span.Milliseconds(),
		"arrival_rate_per_s", float64(n)/span.Seconds(), "raise", raise)
}
