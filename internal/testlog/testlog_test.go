package testlog_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/drainkit/drainkit/internal/testlog"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Concurrent writers all land in the buffer (and -race sees no race); the
// logger writes debug records into it.
func TestBufferAndLogger(t *testing.T) {
	log, buf := testlog.New(t, "test log")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				log.Debug("line")
			}
		})
	}
	wg.Wait()
	if n := strings.Count(buf.String(), "level=DEBUG msg=line"); n != 800 {
		t.Fatalf("buffer holds %d debug lines, want 800", n)
	}
}
