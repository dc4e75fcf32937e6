package syncx

import (
	"sync"
	"time"
)

// WaitFor waits for wg up to d and reports whether it finished. On false,
// the goroutine that waits for wg keeps waiting until wg is done.
func WaitFor(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
