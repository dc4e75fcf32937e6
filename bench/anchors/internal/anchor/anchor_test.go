package anchor_test

import (
	"testing"
	"time"

	"github.com/drainkit/drainkit/bench/anchors/internal/anchor"
)

func TestSplitHostPort(t *testing.T) {
	host, port, err := anchor.SplitHostPort("127.0.0.1:8080")
	if err != nil || host != "127.0.0.1" || port != 8080 {
		t.Errorf("SplitHostPort = %q, %d, %v", host, port, err)
	}
	for _, bad := range []string{"127.0.0.1", "127.0.0.1:x", "127.0.0.1:70000"} {
		if _, _, err := anchor.SplitHostPort(bad); err == nil {
			t.Errorf("SplitHostPort(%q): no error", bad)
		}
	}
}

func TestDrainTimeout(t *testing.T) {
	t.Setenv("DRAINKIT_DRAIN_TIMEOUT", "")
	if d := anchor.DrainTimeout(3 * time.Second); d != 3*time.Second {
		t.Errorf("unset: %s, want the framework default 3s", d)
	}
	t.Setenv("DRAINKIT_DRAIN_TIMEOUT", "8s")
	if d := anchor.DrainTimeout(3 * time.Second); d != 8*time.Second {
		t.Errorf("8s: got %s", d)
	}
	t.Setenv("DRAINKIT_DRAIN_TIMEOUT", "-1s")
	if d := anchor.DrainTimeout(3 * time.Second); d != 3*time.Second {
		t.Errorf("invalid: %s, want the default", d)
	}
}
