package serve

import (
	"log/slog"
	"time"
)

// SleepBaseline is the wait of the sleep10 strategy: the `preStop: sleep
// 10` users put before SIGTERM.
const SleepBaseline = 10 * time.Second

// runSleep is the baseline most teams deploy instead of a drain: a
// `preStop: sleep 10` hook with the pod not ready. At SIGTERM (the drill
// sends it where the kubelet would start the hook) readiness fails, the
// instance deregisters and serves on for SleepBaseline, then
// http.Server.Shutdown, as the shutdown strategy does.
func runSleep(o Options, logger *slog.Logger) (int, error) {
	return runPlain(o, logger, "sleep10", SleepBaseline)
}
