package lifecycle

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// handleSignals relays the configured signals to watchSignals until the
// returned stop is called; stop waits for the watcher to return.
func (l *Lifecycle) handleSignals() (stop func()) {
	sigs := make(chan os.Signal, 2)
	if len(l.opts.Signals) > 0 { // Notify with no signals would relay all of them, SIGURG included
		signal.Notify(sigs, l.opts.Signals...)
	}
	quit := make(chan struct{})
	var watcher sync.WaitGroup
	watcher.Go(func() { l.watchSignals(sigs, quit) })
	return func() { signal.Stop(sigs); close(quit); watcher.Wait() }
}

// watchSignals turns the first signal into a drain and a second one into an
// immediate exit with 128+signo.
func (l *Lifecycle) watchSignals(sigs <-chan os.Signal, quit <-chan struct{}) {
	n := 0
	for {
		select {
		case <-quit:
			return
		case sig := <-sigs:
			n++
			if n == 1 {
				_ = l.startDrain(CauseSignal, sig.String())
				close(l.signaled) // n is 1 once: only this goroutine closes it
				continue
			}
			code := 1
			if s, ok := sig.(syscall.Signal); ok {
				code = 128 + int(s)
			}
			l.opts.Logger.Error("drainkit: second signal, forcing exit", "signal", sig.String(), "exit_code", code)
			l.opts.exit(code)
			return
		}
	}
}
