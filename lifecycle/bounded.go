package lifecycle

import (
	"sync"
	"time"
)

// waitBounded waits for wg up to d and reports whether it finished. A private
// copy of internal/syncx's bounded wait: lifecycle imports nothing of the
// module (layout rule).
func waitBounded(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
