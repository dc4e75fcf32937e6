package drainkit_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/internal/childtest"
)

// TestHelpAndVersionOnStdout: --help, --version and `prestop --help` of a
// service (examples/minimal, a real process) print on standard output, with
// nothing on standard error, and exit 0, as a command's answer does (issue
// 33: they went to standard error, so `svc --help | less` showed nothing).
// A bad flag still goes to standard error with exit 2.
func TestHelpAndVersionOnStdout(t *testing.T) {
	bin, remove, err := childtest.Build("github.com/drainkit/drainkit/examples/minimal")
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	run := func(args ...string) (stdout, stderr string, code int) {
		var o, e bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return o.String(), e.String(), code
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--help"}, "Usage: minimal [flags]"},
		{[]string{"--version"}, "minimal "},
		{[]string{"prestop", "--help"}, "Usage: minimal prestop [flags]"},
	} {
		stdout, stderr, code := run(c.args...)
		if code != 0 || !strings.HasPrefix(stdout, c.want) || stderr != "" {
			t.Errorf("minimal %s: exit %d, stdout %q, stderr %q; want exit 0, stdout starting %q, no stderr",
				strings.Join(c.args, " "), code, stdout, stderr, c.want)
		}
	}
	if stdout, stderr, code := run("--no-such-flag"); code != 2 || stdout != "" || !strings.Contains(stderr, "--no-such-flag") {
		t.Errorf("minimal --no-such-flag: exit %d, stdout %q, stderr %q; want exit 2 and the error on stderr", code, stdout, stderr)
	}
}

// TestMistypedFlagSuggests: a mistyped flag is refused (exit 2) with the
// closest defined flag, by the rule a mistyped key or variable gets
// (config.Closest); a flag far from every one gets no guess.
func TestMistypedFlagSuggests(t *testing.T) {
	for flag, want := range map[string]string{
		"--propagation-mni": "unknown flag: --propagation-mni; did you mean --propagation-min? (see --help)",
		"--htp-addr":        "unknown flag: --htp-addr; did you mean --http-addr? (see --help)",
		"--frobnicate":      "unknown flag: --frobnicate (see --help)",
	} {
		var out bytes.Buffer
		code := drainkit.Run(context.Background(), []string{flag, "1s"}, drainkit.WithOutput(&out), drainkit.WithName("svc"),
			drainkit.WithHTTP("http", ":0", http.NotFoundHandler()))
		if code != 2 || strings.TrimSpace(out.String()) != "svc: "+want {
			t.Errorf("%s: exit %d, output %q; want exit 2 and %q", flag, code, out.String(), "svc: "+want)
		}
	}
}
