package childtest

import "time"

// The drain timings of Timings: the propagation window's bounds and the
// longest a drain may take from the signal to the exit.
const (
	PropagationMin = 2 * time.Second
	PropagationMax = 4 * time.Second
	// Budget is PropagationMax + drain 2 s + stop 1 s + a 1 s margin.
	Budget = 4*time.Second + 2*time.Second + time.Second + time.Second
)

// Timings returns the DRAINKIT_* settings for a child registered in a real
// registry, in a new slice: propagation window PropagationMin..
// PropagationMax with no quiet period, drain timeout 2 s, stop timeout 1 s,
// grace period 10 s, then the registry's own settings (registry, such as a
// TTL and its heartbeat), then fast readiness checks (every 200 ms, timeout
// 100 ms, ejected after one failure, back after two successes).
func Timings(registry ...string) []string {
	env := []string{
		"DRAINKIT_PROPAGATION_MIN=2s", "DRAINKIT_PROPAGATION_QUIET=0s", "DRAINKIT_PROPAGATION_MAX=4s",
		"DRAINKIT_DRAIN_TIMEOUT=2s", "DRAINKIT_STOP_TIMEOUT=1s", "DRAINKIT_GRACE_PERIOD=10s",
	}
	env = append(env, registry...)
	return append(env,
		"DRAINKIT_CHECKS_INTERVAL=200ms", "DRAINKIT_CHECKS_TIMEOUT=100ms",
		"DRAINKIT_CHECKS_FAILURE_THRESHOLD=1", "DRAINKIT_CHECKS_SUCCESS_THRESHOLD=2",
	)
}
