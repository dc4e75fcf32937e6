package lifecycle

import (
	"os"
	"time"

	"github.com/drainkit/drainkit/lifecycle/budget"
)

// noIdentity is the class of the callers that sent no identity.
const noIdentity = "(no identity)"

// measure returns the drain's evidence at its window's end: each caller
// class's latest request after t0 and when it had moved.
func (t *callerTable) measure(t0, end time.Time, quiet, maxWindow time.Duration, cut bool) budget.DrainEvidence {
	d := budget.DrainEvidence{At: t0, WindowMS: end.Sub(t0).Milliseconds(), CutAtMax: cut, MaxMS: maxWindow.Milliseconds(), Classes: map[string]budget.ClassEvidence{}}
	for i := range t.slots {
		s := &t.slots[i]
		if s.key.Load() == 0 {
			continue
		}
		last := t.time(s.last.Load())
		if !last.After(t0) {
			continue
		}
		need := last.Add(callerWait(time.Duration(s.gap.Load()), quiet, maxWindow)).Sub(t0)
		s.mu.Lock()
		class := s.identity
		s.mu.Unlock()
		if class == "" {
			class = noIdentity
		}
		c := d.Classes[class]
		c.StalenessMS = max(c.StalenessMS, last.Sub(t0).Milliseconds())
		c.NeedMS = max(c.NeedMS, need.Milliseconds())
		d.Classes[class] = c
	}
	return d
}

// logAdvice logs the window the evidence asks for (a is not nil).
func (l *Lifecycle) logAdvice(a *budget.WindowAdvice, when string) {
	l.opts.Logger.Info("drainkit: propagation window advised by the last drains' evidence ("+when+")",
		"drains", a.Drains, "need_ms", a.Need.Milliseconds(), "at_least", a.AtLeast, "capped", a.Capped,
		"propagation_max_ms", a.PropagationMax.Milliseconds(), "grace_period_ms", a.GracePeriod.Milliseconds(),
		"termination_grace_period_s", a.TerminationGracePeriodSeconds,
		"current_propagation_max_ms", l.opts.Timings.PropagationMax.Milliseconds())
}

// recordEvidence adds the drain's evidence d to the file under
// Options.EvidenceDir, if set, and logs and keeps the advice. A failure is
// logged: the evidence never fails a drain.
func (l *Lifecycle) recordEvidence(d budget.DrainEvidence) {
	dir := l.opts.EvidenceDir
	if dir == "" {
		return
	}
	e, err := budget.ReadWindowEvidence(dir)
	if err != nil {
		l.opts.Logger.Warn("drainkit: reading the propagation window's evidence failed; starting it afresh",
			"propagation.evidence_dir", dir, "error", err)
		e = budget.WindowEvidence{}
	}
	if err := e.Record(dir, d); err != nil {
		l.opts.Logger.Warn("drainkit: recording the propagation window's evidence failed",
			"propagation.evidence_dir", dir, "error", err)
	}
	if a := e.Advice(l.opts.Timings); a != nil {
		l.logAdvice(a, "after this drain")
		l.mu.Lock()
		l.advice = a
		l.mu.Unlock()
	}
}

// loadEvidence, in New, checks that Options.EvidenceDir, if set, can hold
// the evidence (it is created if missing, and must be writable: a
// *budget.RangeError naming propagation.evidence_dir otherwise), and keeps
// and logs the advice of what it holds. An unreadable file is logged and
// replaced at the next drain: old evidence never keeps a service from
// starting.
func (l *Lifecycle) loadEvidence() error {
	dir := l.opts.EvidenceDir
	if dir == "" {
		return nil
	}
	bad := func(err error) error {
		return &budget.RangeError{Key: "propagation.evidence_dir", Value: dir,
			Allowed: "a directory drainkit can create and write (" + err.Error() + ")"}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return bad(err)
	}
	f, err := os.CreateTemp(dir, budget.EvidenceFile+".*")
	if err != nil {
		return bad(err)
	}
	f.Close()
	os.Remove(f.Name())
	e, err := budget.ReadWindowEvidence(dir)
	if err != nil {
		l.opts.Logger.Warn("drainkit: reading the propagation window's evidence failed; the next drain starts it afresh",
			"propagation.evidence_dir", dir, "error", err)
		return nil
	}
	if a := e.Advice(l.opts.Timings); a != nil {
		l.advice = a
		l.logAdvice(a, "at start")
	}
	return nil
}
