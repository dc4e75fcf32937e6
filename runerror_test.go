package drainkit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry/registrytest"
)

// TestRunErrorIsLogged (issue 18 item 4): an error Run returns is logged
// with the exit code, never dropped. Here a registrar added through
// WithLifecycle (which the start's budget check cannot see) meets a
// deregistration budget that does not fit, so Run refuses at its start:
// exit 1, and the log names registry.deregister_timeout. The setting is
// claimed by a Registration that registers nowhere (a registry setting no
// wired registrar reads would exit 2 before Run).
func TestRunErrorIsLogged(t *testing.T) {
	out := &testlog.Buffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	code := drainkit.Run(ctx, []string{"--http-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0",
		"--propagation-min", "0s", "--propagation-quiet", "0s", "--propagation-max", "0s"},
		drainkit.WithOutput(out),
		drainkit.WithEnv([]string{"DRAINKIT_REGISTRY_DEREGISTER_TIMEOUT=20s"}),
		drainkit.WithHTTP("http", ":0", nil),
		drainkit.WithRegistrar("claims", drainkit.Registration{Keys: []string{"registry.deregister_timeout"},
			Enabled: func(*config.Config) bool { return false }}),
		drainkit.WithLifecycle(func(lc *lifecycle.Lifecycle) error {
			lc.AddRegistrar("late", registrytest.NewMemory("svc"))
			return nil
		}))
	log := out.String()
	if code != 1 {
		t.Fatalf("exit code %d, want 1; log:\n%s", code, log)
	}
	var line string
	for l := range strings.Lines(log) {
		if strings.Contains(l, `"msg":"drainkit: exit"`) {
			line = l
		}
	}
	if !strings.Contains(line, `"exit_code":1`) || !strings.Contains(line, "registry.deregister_timeout") {
		t.Errorf("no exit line with the code and Run's error; log:\n%s", log)
	}
}
