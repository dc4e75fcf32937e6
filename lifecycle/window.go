package lifecycle

import (
	"time"

	"github.com/drainkit/drainkit/lifecycle/budget"
)

// windowEvidence is what the propagation window's end is judged by,
// besides the timings.
type windowEvidence struct {
	dereg time.Time // when deregistration finished
	last  time.Time // the last late arrival (t0 if none)
	due   time.Time // the latest time until which a known caller is due (callerTable.dueUntil); zero if none
	// confirmed: the registry confirmed the deregistration and min is the
	// default (Options.MinIsDefault), so min no longer holds the window.
	confirmed bool
}

// windowEnd computes when the propagation window ends. t0 is the drain's
// start. The window lasts at least min after the deregistration (unless
// e.confirmed and quiet > 0: the evidence is kept), then until no request arrived for quiet and every caller
// has moved, and never past t0+max. Min, quiet and max all 0: no window.
func windowEnd(t budget.Timings, t0 time.Time, e windowEvidence) time.Time {
	if t.PropagationMin == 0 && t.PropagationQuiet == 0 && t.PropagationMax == 0 {
		return t0
	}
	end := e.dereg
	if !e.confirmed || t.PropagationQuiet == 0 {
		// With quiet 0 no evidence is kept: nothing says the callers moved.
		end = end.Add(t.PropagationMin)
	}
	if t.PropagationQuiet > 0 {
		if q := e.last.Add(t.PropagationQuiet); q.After(end) {
			end = q
		}
		if e.due.After(end) {
			end = e.due
		}
	}
	if limit := t0.Add(t.PropagationMax); end.After(limit) {
		end = limit
	}
	return end
}

// awaitWindow blocks until the propagation window is over. Arrivals can push
// its end later, so it re-evaluates when each timer fires. The evidence is
// per caller (callerTable): a caller is due until dueFactor times its usual
// gap (learned before the drain; at least quiet, at most max) has passed
// since its last request, so a slow caller, which the instance-wide quiet
// rule alone would take for gone, keeps the window open until it has
// moved. It counts the late arrivals of the window's last second, and
// names the callers still due, so that a window cut short by
// propagation.max while consumers still send is not silent (warnOverrun).
//
// confirmed is closed when every registrar that can confirm has confirmed
// the deregistration (nil if none can, or one failed): with
// Options.MinIsDefault, min then no longer holds the window, which ends as
// soon as the evidence says every caller has moved.
//
// It reports whether the window was cut at propagation.max with a caller
// still due.
func (l *Lifecycle) awaitWindow(dereg time.Time, confirmed <-chan struct{}) (cut bool) {
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
	// wake is confirmed while it may still waive min; waived once it did.
	var wake <-chan struct{}
	if l.opts.MinIsDefault {
		wake = confirmed
	}
	waived := false
	var timer *time.Timer
	for {
		if wake != nil {
			select {
			case <-wake:
				waived, wake = true, nil
			default:
			}
		}
		ev := windowEvidence{
			dereg:     dereg,
			last:      t0.Add(time.Duration(l.lastLate.Load())),
			due:       l.callers.dueUntil(tm.PropagationQuiet, tm.PropagationMax),
			confirmed: waived,
		}
		end := windowEnd(tm, t0, ev)
		d := time.Until(end)
		if d <= 0 {
			l.logCallerOverflow()
			if tm.PropagationMax > 0 && end.Equal(limit) && !spanStart.IsZero() {
				due := l.callers.due(limit, tm.PropagationQuiet, tm.PropagationMax)
				l.warnOverrun(l.late.Load()-lateBefore, time.Since(spanStart), due, t0, limit)
				return len(due) > 0
			}
			return false
		}
		if timer == nil {
			timer = time.NewTimer(d)
			defer timer.Stop()
		} else {
			timer.Reset(d)
		}
		select {
		case <-timer.C:
		case <-wake: // re-evaluated at the loop's top
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
// (at end) while consumers still sent: n requests arrived in the span
// before its end (a second unless the window is shorter), and due are the
// callers still due at end (callerTable.due). The requests arriving after
// the listeners close will fail. The line names up to maxNamedCallers of
// the callers (IP, identity, usual gap, how long before the end each last
// sent) and the figures that would have covered them: propagation.max at
// least the latest time a caller was due (its staleness so far plus its
// wait), rounded up to a second, and the grace_period and
// terminationGracePeriodSeconds that fit it. These are lower bounds: the
// callers had not moved yet. With propagation.quiet 0, only min keeps the
// window open, so raising max alone changes little.
func (l *Lifecycle) warnOverrun(n int64, span time.Duration, due []callerState, t0, end time.Time) {
	if (n == 0 && len(due) == 0) || span <= 0 {
		return
	}
	tm := l.opts.Timings
	raise := "propagation.max"
	if tm.PropagationQuiet == 0 {
		raise = "propagation.quiet (so the window waits for arrivals to stop) and propagation.max"
	}
	args := []any{"propagation_max_ms", tm.PropagationMax.Milliseconds(), "arrivals", n, "span_ms", span.Milliseconds(),
		"arrival_rate_per_s", float64(n) / span.Seconds(), "raise", raise}
	if len(due) > 0 {
		need := tm.PropagationMax
		for _, c := range due {
			need = max(need, c.DueUntil.Sub(t0))
		}
		need = roundUpSecond(need)
		fit := tm
		fit.PropagationMax = need
		grace := max(fit.MinGracePeriod(), tm.GracePeriod)
		args = append(args, "callers_due", len(due), "callers", describeCallers(due, end, maxNamedCallers),
			"propagation_max_at_least_ms", need.Milliseconds(),
			"grace_period_at_least_ms", grace.Milliseconds(),
			"termination_grace_period_at_least_s", int64(roundUpSecond(grace+budget.PodSlack)/time.Second))
	}
	l.opts.Logger.Warn("drainkit: the propagation window ended at propagation.max while consumers were still sending; "+
		"they had not yet noticed the drain", args...)
}

// maxNamedCallers is how many callers the overrun warning names.
const maxNamedCallers = 10

func roundUpSecond(d time.Duration) time.Duration {
	if r := d % time.Second; r != 0 {
		d += time.Second - r
	}
	return d
}

// logCallerOverflow logs, once per Lifecycle, that some caller found no slot
// in the caller table: those callers were judged by the instance-wide
// quiet rule only.
func (l *Lifecycle) logCallerOverflow() {
	if l.callers.overflow.Load() && l.callers.logged.CompareAndSwap(false, true) {
		l.opts.Logger.Warn("drainkit: more callers than the propagation window's caller table holds; "+
			"those beyond it were judged by propagation.quiet alone (instance-wide)", "caller_slots", callerSlots)
	}
}
