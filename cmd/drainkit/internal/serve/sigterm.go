package serve

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// SignalLogged is the message logged when the process receives SIGTERM (the
// slog record's time is the instant): with a preStop hook the drain starts
// before the signal and the lifecycle logs nothing when it joins, so the
// Kubernetes drill reads the kubelet's SIGTERM from this line.
const SignalLogged = "serve: SIGTERM received"

// logSIGTERM logs SignalLogged when SIGTERM arrives until stop is called. It
// only observes: signal.Notify delivers to every registered channel, so the
// strategy's own handling is unchanged. Call it only where SIGTERM is
// already caught (the exit strategy relies on its default action).
func logSIGTERM(logger *slog.Logger) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-sigs:
			logger.Info(SignalLogged)
		case <-done:
			// A signal that came with stop is still logged.
			select {
			case <-sigs:
				logger.Info(SignalLogged)
			default:
			}
		}
	}()
	return func() { signal.Stop(sigs); close(done); <-exited }
}
