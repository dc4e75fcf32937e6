package lifecycle

import "time"

// windowEnd computes when the propagation window ends. t0 is the drain's
// start, dereg when deregistration finished, last the last late arrival (t0
// if none). The window lasts at least min after dereg, then until no request
// arrived for quiet, and never past t0+max. Min, quiet and max all 0: no window.
func windowEnd(t Timings, t0, dereg, last time.Time) time.Time {
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
// its end later, so it re-evaluates when each timer fires.
func (l *Lifecycle) awaitWindow(dereg time.Time) {
	t0 := l.t0()
	var timer *time.Timer
	for {
		last := t0.Add(time.Duration(l.lastLate.Load()))
		d := time.Until(windowEnd(l.opts.timings, t0, dereg, last))
		if d <= 0 {
			return
		}
		if timer == nil {
			timer = time.NewTimer(d)
			defer timer.Stop()
		} else {
			timer.Reset(d)
		}
		<-timer.C
	}
}
