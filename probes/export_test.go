package probes

import (
	"testing"
	"time"
)

// For the external tests (package probes_test), which otherwise see a
// Handler only through its exported API.

// WatchdogLastTick returns when h's watchdog last completed a tick, as an
// offset from its start.
func WatchdogLastTick(h *Handler) time.Duration { return time.Duration(h.wd.last.Load()) }

// OptionsInForce returns h's options with the defaults filled in.
func OptionsInForce(h *Handler) Options { return h.opts }

// PollUntil is pollUntil, for the external tests.
func PollUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	pollUntil(t, d, what, cond)
}
