package drill

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// status is one strategy run's live state for the progress line.
type status struct {
	name string
	rec  func() *Recorder

	mu    sync.Mutex
	phase string
}

func (s *status) set(format string, args ...any) {
	s.mu.Lock()
	s.phase = fmt.Sprintf(format, args...)
	s.mu.Unlock()
}

func (s *status) line() string {
	s.mu.Lock()
	phase := s.phase
	s.mu.Unlock()
	var n, failed int64
	if r := s.rec(); r != nil {
		n, failed = r.Counts()
	}
	return fmt.Sprintf("%s: %s, %d req, %d failed", s.name, phase, n, failed)
}

// Progress writes the live progress line: every 250 ms rewritten in place
// with \r when Out is a terminal, otherwise one line every 5 s.
type Progress struct {
	Out      io.Writer
	Terminal bool
	start    time.Time
	statuses []*status
}

// startFor starts printing the progress of runs (nothing when p is nil)
// and returns the function that stops it and waits.
func (p *Progress) startFor(ctx context.Context, start time.Time, runs []*strategyRun) (stop func()) {
	if p == nil {
		return func() {}
	}
	p.start = start
	p.statuses = p.statuses[:0] // a scenario's runs replace the last one's
	for _, sr := range runs {
		p.statuses = append(p.statuses, sr.st)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); p.run(ctx) }()
	return func() { cancel(); <-done }
}

func (p *Progress) render() string {
	parts := make([]string, len(p.statuses))
	for i, s := range p.statuses {
		parts[i] = s.line()
	}
	return fmt.Sprintf("[%5.1fs] %s", time.Since(p.start).Seconds(), strings.Join(parts, " | "))
}

// run prints until ctx ends, then clears the in-place line.
func (p *Progress) run(ctx context.Context) {
	if p.Out == nil {
		return
	}
	every := 5 * time.Second
	if p.Terminal {
		every = 250 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	width := 0
	for {
		select {
		case <-ctx.Done():
			if p.Terminal && width > 0 {
				fmt.Fprintf(p.Out, "\r%s\r", strings.Repeat(" ", width))
			}
			return
		case <-t.C:
		}
		line := p.render()
		if p.Terminal {
			pad := ""
			if len(line) < width {
				pad = strings.Repeat(" ", width-len(line))
			}
			width = len(line)
			fmt.Fprintf(p.Out, "\r%s%s", line, pad)
		} else {
			fmt.Fprintln(p.Out, line)
		}
	}
}
