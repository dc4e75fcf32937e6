package serve

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/testpoll"
)

// lockedBuffer is a log sink safe to read while the logger writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// SIGTERM is logged with its instant (the Kubernetes drill reads the
// kubelet's SIGTERM from this line); the observer only observes.
func TestLogSIGTERM(t *testing.T) {
	var out lockedBuffer
	stop := logSIGTERM(slog.New(slog.NewJSONHandler(&out, nil)))
	// Caught while the observer is registered, so it cannot end the test.
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		stop()
		t.Fatal(err)
	}
	testpoll.Eventually(t, 10*time.Second, "the SIGTERM line", func() (bool, string) {
		return strings.Contains(out.String(), SignalLogged), out.String()
	})
	stop()
	if !strings.Contains(out.String(), `"time":`) {
		t.Fatalf("the line has no time: %s", out.String())
	}
}
