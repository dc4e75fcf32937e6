package toolbin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Launch starts cmd with its output appended to logPath, after a banner
// line "=== <name>: starting at <time>". The child is killed if the test
// process dies (Pdeathsig). It returns the channel closed when the child
// has exited; cmd.Wait is called by Launch's goroutine.
func Launch(cmd *exec.Cmd, logPath, name string) (exited <-chan struct{}, err error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "=== %s: starting at %s\n", name, time.Now().Format(time.RFC3339Nano))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: start %s: %w", name, cmd.Path, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	return done, nil
}

// WaitUp calls up every 50ms until it returns nil (nil), the child exits
// (an error), or timeout passes (an error with up's last error). Errors
// start with what and name logPath.
func WaitUp(exited <-chan struct{}, timeout time.Duration, what, logPath string, up func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if last = up(ctx); last == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited during start-up; see %s", what, logPath)
		case <-ctx.Done():
			return fmt.Errorf("%s not up within %s (last error: %v); see %s", what, timeout, last, logPath)
		case <-tick.C:
		}
	}
}

// LogTail logs the last 8000 bytes of the log at path, titled, if t failed.
func LogTail(t testing.TB, path, title string) {
	if !t.Failed() {
		return
	}
	b, _ := os.ReadFile(path)
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	t.Logf("%s (tail):\n%s", title, b)
}
