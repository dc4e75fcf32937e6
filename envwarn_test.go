package drainkit_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/internal/testlog"
)

// TestEnvTypoWarnsAtStart: a misspelt DRAINKIT_ variable reaches the start
// log, through the entry point's own (default) logger, as a warning naming
// it and the variable meant, before the start line (before any listener
// opens); the service starts and drains normally.
func TestEnvTypoWarnsAtStart(t *testing.T) {
	out := &testlog.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrs := make(chan map[string]net.Addr, 1)
	code := make(chan int, 1)
	go func() {
		code <- drainkit.Run(ctx, []string{"--http-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0",
			"--propagation-min", "0s", "--propagation-quiet", "0s", "--propagation-max", "0s"},
			drainkit.WithHTTP("http", ":0", http.NotFoundHandler()),
			drainkit.OnStarted(func(a map[string]net.Addr) { addrs <- a }),
			drainkit.WithEnv([]string{"DRAINKIT_PROPAGATION_MNI=6s", "DRAINKIT_CONSUL_BIN=/x", "DRAINKIT_DRAIN_TIMEOUT=5s"}),
			drainkit.WithOutput(out))
	}()
	select {
	case <-addrs:
	case c := <-code:
		t.Fatalf("Run returned %d before starting; output:\n%s", c, out)
	case <-time.After(15 * time.Second):
		t.Fatalf("no start within 15s; output:\n%s", out)
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit code %d", c)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return within 20s of the drain")
	}
	log := out.String()
	want := `"level":"WARN","msg":"env DRAINKIT_PROPAGATION_MNI is not a drainkit setting and is ignored; did you mean DRAINKIT_PROPAGATION_MIN?",` +
		`"env":"DRAINKIT_PROPAGATION_MNI","did_you_mean":"DRAINKIT_PROPAGATION_MIN"}`
	w, s := strings.Index(log, want), strings.Index(log, `"msg":"started"`)
	if w < 0 || s < 0 || w > s {
		t.Errorf("want the warning %s before the start line; log:\n%s", want, log)
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
