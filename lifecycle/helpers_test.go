package lifecycle

import (
	"io"
	"log/slog"
	"testing"
)

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newTest(t *testing.T, opts ...Option) *Lifecycle {
	t.Helper()
	l, err := New(append([]Option{WithLogger(discard())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustMove(t *testing.T, l *Lifecycle, to State) {
	t.Helper()
	if _, err := l.transition(to, CauseWarmup, "test", nil); err != nil {
		t.Fatal(err)
	}
}

// hooks returns the ServerHooks that Run hands to l's servers.
func hooks(l *Lifecycle) ServerHooks { return (*serverHooks)(l) }
