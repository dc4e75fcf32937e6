package drainkit_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/drainkit/drainkit"
)

// TestEnvTypoWarnsAtStart: a misspelt DRAINKIT_ variable reaches the start
// log, through the entry point's own (default) logger, as a warning naming
// it and the variable meant, before the start line (before any listener
// opens); the service starts and drains normally.
func TestEnvTypoWarnsAtStart(t *testing.T) {
	log := startedLogged(t,
		drainkit.WithEnv([]string{"DRAINKIT_PROPAGATION_MNI=6s", "DRAINKIT_CONSUL_BIN=/x", "DRAINKIT_DRAIN_TIMEOUT=5s"}))
	want := `"level":"WARN","msg":"env DRAINKIT_PROPAGATION_MNI is not a drainkit setting and is ignored; did you mean DRAINKIT_PROPAGATION_MIN?",` +
		`"env":"DRAINKIT_PROPAGATION_MNI","did_you_mean":"DRAINKIT_PROPAGATION_MIN"}`
	w, s := strings.Index(log, want), strings.Index(log, `"msg":"started"`)
	if w < 0 || s < 0 || w > s {
		t.Errorf("want the warning %s before the start line; log:\n%s", want, log)
	}
	if !strings.Contains(log, `"registries":"none"`) {
		t.Errorf("the start line does not say that the instance registers nowhere; log:\n%s", log)
	}
	if n := strings.Count(log, "is not a drainkit setting"); n != 1 {
		t.Errorf("%d warnings, want 1 (DRAINKIT_CONSUL_BIN is known); log:\n%s", n, log)
	}
}

// TestEnvTypoWarnsOnBadSettings: when the settings do not load, the warning
// comes before the error line, since the ignored variable may be what the
// error is about (here propagation.min stays at its default 5s, above the
// propagation.max that was set).
func TestEnvTypoWarnsOnBadSettings(t *testing.T) {
	var out bytes.Buffer
	code := drainkit.Run(context.Background(), []string{"--http-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0"},
		drainkit.WithHTTP("http", ":0", http.NotFoundHandler()), drainkit.WithName("svc"), drainkit.WithOutput(&out),
		drainkit.WithEnv([]string{"DRAINKIT_PROPAGATION_MNI=1s", "DRAINKIT_PROPAGATION_MAX=3s"}))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := "svc: warning: env DRAINKIT_PROPAGATION_MNI is not a drainkit setting and is ignored; did you mean DRAINKIT_PROPAGATION_MIN?"
	if code != 2 || len(lines) != 2 || lines[0] != want || !strings.HasPrefix(lines[1], `svc: propagation.min: "5s" (default)`) {
		t.Errorf("exit %d, output %q: want 2, %q, then the error", code, out.String(), want)
	}
}
