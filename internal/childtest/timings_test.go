package childtest_test

import (
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/drainkit/drainkit/internal/childtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Timings puts the registry's settings between the drain timings and the
// readiness checks, in a new slice each call.
func TestTimings(t *testing.T) {
	a := childtest.Timings("X=1")
	b := childtest.Timings("Y=2", "Z=3")
	if len(a) != 11 || a[6] != "X=1" || !strings.HasPrefix(a[7], "DRAINKIT_CHECKS_INTERVAL=") {
		t.Fatalf("Timings(X=1) = %v", a)
	}
	if slices.Contains(a, "Y=2") || len(b) != 12 || b[6] != "Y=2" || b[7] != "Z=3" {
		t.Fatalf("Timings share their slice: %v, %v", a, b)
	}
}

// FreeAddr gives a loopback address that can be listened on.
func TestFreeAddr(t *testing.T) {
	addr := childtest.FreeAddr(t)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("FreeAddr = %q", addr)
	}
}
