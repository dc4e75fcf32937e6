package lifecycle

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/drainkit/drainkit/lifecycle/budget"
)

// evidenceFile is the name of the file, under Options.EvidenceDir, that
// keeps the last drains' measured staleness per caller class.
const evidenceFile = "drainkit-window.json"

// evidence is the content of the evidence file: the last drains, oldest
// first, at most budget.EvidenceDrains.
type evidence struct {
	Drains []drainEvidence `json:"drains"`
}

// drainEvidence is one drain's measurement.
type drainEvidence struct {
	At       time.Time `json:"at"`         // the drain's start (t0)
	WindowMS int64     `json:"window_ms"`  // when its window ended, from t0
	CutAtMax bool      `json:"cut_at_max"` // it ended at propagation.max with a caller still due
	// Classes are the caller classes (identity; noIdentity if none) that
	// sent after t0.
	Classes map[string]classEvidence `json:"classes"`
}

// classEvidence is one caller class's staleness in a drain.
type classEvidence struct {
	StalenessMS int64 `json:"staleness_ms"` // its last request, from t0
	NeedMS      int64 `json:"need_ms"`      // until it had moved (staleness plus its wait), from t0
}

// noIdentity is the class of the callers that sent no identity.
const noIdentity = "(no identity)"

// measure returns the drain's evidence at its window's end: each caller
// class's latest request after t0 and when it had moved.
func (t *callerTable) measure(t0, end time.Time, quiet, maxWindow time.Duration, cut bool) drainEvidence {
	d := drainEvidence{At: t0, WindowMS: end.Sub(t0).Milliseconds(), CutAtMax: cut, Classes: map[string]classEvidence{}}
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

// readEvidence reads the evidence file under dir; a missing file is no
// evidence.
func readEvidence(dir string) (evidence, error) {
	var e evidence
	b, err := os.ReadFile(filepath.Join(dir, evidenceFile))
	if errors.Is(err, fs.ErrNotExist) {
		return e, nil
	}
	if err != nil {
		return e, err
	}
	return e, json.Unmarshal(b, &e)
}

// add appends d, keeping the last budget.EvidenceDrains drains, and writes
// the file under dir (a new file renamed over the old, so a reader never
// sees half of it).
func (e *evidence) add(dir string, d drainEvidence) error {
	e.Drains = append(e.Drains, d)
	if n := len(e.Drains) - budget.EvidenceDrains; n > 0 {
		e.Drains = e.Drains[n:]
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, evidenceFile+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, evidenceFile))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// advice returns the window the recorded drains ask for, nil if none
// recorded a caller.
func (e evidence) advice(t budget.Timings) *budget.WindowAdvice {
	var need time.Duration
	atLeast, seen := false, false
	for _, d := range e.Drains {
		for _, c := range d.Classes {
			seen = true
			need = max(need, time.Duration(c.NeedMS)*time.Millisecond)
		}
		atLeast = atLeast || d.CutAtMax
	}
	if !seen {
		return nil
	}
	a := t.Advise(need, len(e.Drains), atLeast)
	return &a
}

// logAdvice logs the window the evidence asks for (a is not nil).
func (l *Lifecycle) logAdvice(a *budget.WindowAdvice, when string) {
	l.opts.Logger.Info("drainkit: propagation window advised by the last drains' evidence ("+when+")",
		"drains", a.Drains, "need_ms", a.Need.Milliseconds(), "at_least", a.AtLeast,
		"propagation_max_ms", a.PropagationMax.Milliseconds(), "grace_period_ms", a.GracePeriod.Milliseconds(),
		"termination_grace_period_s", a.TerminationGracePeriodSeconds,
		"current_propagation_max_ms", l.opts.Timings.PropagationMax.Milliseconds())
}

// recordEvidence adds the drain's evidence d to the file under
// Options.EvidenceDir, if set, and logs and keeps the advice. A failure is
// logged: the evidence never fails a drain.
func (l *Lifecycle) recordEvidence(d drainEvidence) {
	dir := l.opts.EvidenceDir
	if dir == "" {
		return
	}
	e, err := readEvidence(dir)
	if err != nil {
		l.opts.Logger.Warn("drainkit: reading the propagation window's evidence failed; starting it afresh",
			"propagation.evidence_dir", dir, "error", err)
		e = evidence{}
	}
	if err := e.add(dir, d); err != nil {
		l.opts.Logger.Warn("drainkit: recording the propagation window's evidence failed",
			"propagation.evidence_dir", dir, "error", err)
	}
	if a := e.advice(l.opts.Timings); a != nil {
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
	f, err := os.CreateTemp(dir, evidenceFile+".*")
	if err != nil {
		return bad(err)
	}
	f.Close()
	os.Remove(f.Name())
	e, err := readEvidence(dir)
	if err != nil {
		l.opts.Logger.Warn("drainkit: reading the propagation window's evidence failed; the next drain starts it afresh",
			"propagation.evidence_dir", dir, "error", err)
		return nil
	}
	if a := e.advice(l.opts.Timings); a != nil {
		l.advice = a
		l.logAdvice(a, "at start")
	}
	return nil
}
