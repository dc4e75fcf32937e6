package lifecycle

import (
	"github.com/drainkit/drainkit/lifecycle/budget"
	"testing"
	"time"
)

func TestWindowEnd(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := time.Second
	tm := func(min, quiet, max time.Duration) budget.Timings {
		return budget.Timings{PropagationMin: min, PropagationQuiet: quiet, PropagationMax: max}
	}
	cases := []struct {
		name        string
		tm          budget.Timings
		dereg, last time.Duration // offsets from t0
		due         time.Duration // offset from t0 of the latest caller's due time; 0: none
		confirmed   bool          // min waived (Options.MinIsDefault and a confirmed deregistration)
		want        time.Duration
	}{
		{"no window", tm(0, 0, 0), 0, 0, 0, false, 0},
		{"min only", tm(5*s, 0, 15*s), 0, 3 * s, 0, false, 5 * s},
		{"min counts from deregistration", tm(5*s, 0, 15*s), 2 * s, 0, 0, false, 7 * s},
		{"quiet after min, no arrivals", tm(5*s, 1*s, 15*s), 0, 0, 0, false, 5 * s},
		{"late arrival extends", tm(5*s, 1*s, 15*s), 0, 7 * s, 0, false, 8 * s},
		{"arrivals stop before min", tm(5*s, 1*s, 15*s), 0, 2 * s, 0, false, 5 * s},
		{"capped at max", tm(5*s, 1*s, 15*s), 0, 14900 * time.Millisecond, 0, false, 15 * s},
		{"slow deregistration capped", tm(5*s, 1*s, 6*s), 4 * s, 0, 0, false, 6 * s},
		{"quiet only", tm(0, 1*s, 15*s), 0, 0, 0, false, 1 * s},
		{"a caller still due extends", tm(5*s, 1*s, 15*s), 0, 2 * s, 9 * s, false, 9 * s},
		{"a caller due before min", tm(5*s, 1*s, 15*s), 0, 2 * s, 4 * s, false, 5 * s},
		{"a caller due past max", tm(5*s, 1*s, 15*s), 0, 2 * s, 20 * s, false, 15 * s},
		{"confirmed: min waived", tm(5*s, 1*s, 15*s), 0, 0, 0, true, 1 * s},
		{"confirmed: a caller still due", tm(5*s, 1*s, 15*s), 0, 2 * s, 4 * s, true, 4 * s},
		{"confirmed: quiet 0, no evidence, min holds", tm(5*s, 0, 15*s), 1 * s, 0, 0, true, 6 * s},
	}
	for _, c := range cases {
		var due time.Time
		if c.due != 0 {
			due = t0.Add(c.due)
		}
		got := windowEnd(c.tm, t0, windowEvidence{dereg: t0.Add(c.dereg), last: t0.Add(c.last), due: due, confirmed: c.confirmed}).Sub(t0)
		if got != c.want {
			t.Errorf("%s: window ends at %v, want %v", c.name, got, c.want)
		}
	}
}
