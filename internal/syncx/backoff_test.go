package syncx_test

import (
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
)

// TestBackoff: waits within [d/2, d] as d doubles from Min to Max; Reset
// starts over.
func TestBackoff(t *testing.T) {
	b := syncx.Backoff{Min: 100 * time.Millisecond, Max: 400 * time.Millisecond}
	for round := range 2 {
		for i, d := range []time.Duration{100, 200, 400, 400} {
			d *= time.Millisecond
			if w := b.Next(); w < d/2 || w > d {
				t.Fatalf("round %d wait %d: %s, want within [%s, %s]", round, i, w, d/2, d)
			}
		}
		b.Reset()
	}
}
