package main

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// With --admin-metrics the admin listener serves GET /metrics (OpenTelemetry
// through the Prometheus exporter): the state gauge follows the lifecycle.
// Without it, /metrics is not served.
func TestAdminMetrics(t *testing.T) {
	fast := []string{"DRAINKIT_PROPAGATION_MIN=0", "DRAINKIT_PROPAGATION_QUIET=0", "DRAINKIT_PROPAGATION_MAX=0"}
	c := startChild(t, fast, "--admin-metrics")
	// GET /state shows READY as soon as the lifecycle stores it; the
	// telemetry observer counts that transition a moment later (after the
	// transition's log line), so READY and the first transitions_total
	// sample are awaited together. Every assertion below still runs on the
	// body fetched here.
	var code int
	var body string
	c.WaitFor(10*time.Second, "READY, and its transition counted in /metrics", func() bool {
		if c.State() != "READY" {
			return false
		}
		code, body = c.AdminDo("GET", "/metrics", nil)
		return code != http.StatusOK || strings.Contains(body, "drainkit_lifecycle_transitions_total{")
	})
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	for _, want := range []string{`drainkit_lifecycle_state{`, `state="READY"`, "drainkit_lifecycle_transitions_total{", "http_server_active_requests"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "drainkit_lifecycle_state{") && strings.Contains(line, `state="READY"`) && !strings.HasSuffix(line, " 1") {
			t.Errorf("READY gauge is not 1: %s", line)
		}
	}
	if code := c.Probe("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz behind the metrics mux: %d", code)
	}
	c.Signal(syscall.SIGTERM)
	if code := c.WaitExit(20 * time.Second); code != 0 {
		t.Errorf("exit %d", code)
	}

	plain := startChild(t, fast)
	plain.WaitState("READY")
	if code := plain.Probe("/metrics"); code != http.StatusNotFound {
		t.Errorf("GET /metrics without --admin-metrics: %d, want 404", code)
	}
	plain.Signal(syscall.SIGTERM)
	plain.WaitExit(20 * time.Second)
}
