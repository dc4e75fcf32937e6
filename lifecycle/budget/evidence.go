package budget

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// EvidenceFile is the name of the file, under lifecycle.Options.EvidenceDir
// (propagation.evidence_dir), that
// keeps the last drains' measured staleness per caller class
// (WindowEvidence).
const EvidenceFile = "drainkit-window.json"

// WindowEvidence is what the evidence file (EvidenceFile, under
// lifecycle.Options.EvidenceDir) holds: the last drains' measured staleness per
// caller class, oldest first, at most EvidenceDrains drains. The
// lifecycle writes it at each drain's window end; `drainkit check
// --from-drains` reads it (ReadWindowEvidence).
type WindowEvidence struct {
	Drains []DrainEvidence `json:"drains"`
}

// DrainEvidence is one drain's measurement: durations in milliseconds
// from the drain's start (t0), as the file keeps them.
type DrainEvidence struct {
	At       time.Time `json:"at"`         // the drain's start (t0)
	WindowMS int64     `json:"window_ms"`  // when its window ended, from t0
	CutAtMax bool      `json:"cut_at_max"` // it ended at propagation.max with a caller still due
	// MaxMS is its propagation.max (0 in files written before it was
	// kept): a later drain not cut with a longer max measured what a cut
	// one could not.
	MaxMS int64 `json:"max_ms,omitempty"`
	// Classes are the caller classes (identity; "(no identity)" if none)
	// that sent after t0.
	Classes map[string]ClassEvidence `json:"classes"`
}

// ClassEvidence is one caller class's staleness in a drain. A class is
// the callers' identity (the drainkit consumer header, else the
// User-Agent), "(no identity)" for callers that sent none.
type ClassEvidence struct {
	StalenessMS int64 `json:"staleness_ms"` // its last request, from t0
	NeedMS      int64 `json:"need_ms"`      // until it had moved (staleness plus its wait), from t0
}

// ReadWindowEvidence reads the evidence file under dir (EvidenceFile); a
// missing file is no evidence (no drains, no error). Errors are the file's
// reading or JSON decoding errors.
func ReadWindowEvidence(dir string) (WindowEvidence, error) {
	var e WindowEvidence
	b, err := os.ReadFile(filepath.Join(dir, EvidenceFile))
	if errors.Is(err, fs.ErrNotExist) {
		return e, nil
	}
	if err != nil {
		return e, err
	}
	return e, json.Unmarshal(b, &e)
}

// Record appends d, keeping the last EvidenceDrains drains, and writes
// the file under dir (a new file renamed over the old, so a reader never
// sees half of it). Errors are the file system's.
func (e *WindowEvidence) Record(dir string, d DrainEvidence) error {
	e.Drains = append(e.Drains, d)
	if n := len(e.Drains) - EvidenceDrains; n > 0 {
		e.Drains = e.Drains[n:]
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, EvidenceFile+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, EvidenceFile))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// Advice returns the window the recorded drains ask for (Timings.Advise
// over the longest need of any caller class), with t's drain.timeout and
// stop.timeout; nil if no drain recorded a caller. AtLeast when a window
// was cut at propagation.max with a caller still due and no later drain
// with callers, not cut, had a longer propagation.max: that later drain
// saw the callers move, so the cut one's need is no longer a mere lower
// bound (its need still counts: the advice never goes below it).
func (e WindowEvidence) Advice(t Timings) *WindowAdvice {
	var need time.Duration
	seen := false
	var cutMax int64 = -1 // the longest max of a cut drain not yet superseded; -1: none
	for _, d := range e.Drains {
		for _, c := range d.Classes {
			seen = true
			need = max(need, time.Duration(c.NeedMS)*time.Millisecond)
		}
		switch {
		case d.CutAtMax:
			cutMax = max(cutMax, d.MaxMS)
		case len(d.Classes) > 0 && d.MaxMS > cutMax:
			cutMax = -1
		}
	}
	if !seen {
		return nil
	}
	a := t.Advise(need, len(e.Drains), cutMax >= 0)
	return &a
}
