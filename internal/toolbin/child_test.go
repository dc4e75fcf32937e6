package toolbin_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/toolbin"
)

// Launch writes the banner and the child's output to the log and closes
// exited when the child is gone; WaitUp then reports the exit.
func TestLaunchWaitUpExited(t *testing.T) {
	log := filepath.Join(t.TempDir(), "child.log")
	exited, err := toolbin.Launch(exec.Command("sh", "-c", "echo hello"), log, "childtest")
	if err != nil {
		t.Fatal(err)
	}
	err = toolbin.WaitUp(exited, 10*time.Second, "childtest: sh", log, func(context.Context) error { return errors.New("not yet") })
	if err == nil || !strings.Contains(err.Error(), "exited during start-up") {
		t.Fatalf("WaitUp = %v, want an exit during start-up", err)
	}
	b, _ := os.ReadFile(log)
	if !strings.HasPrefix(string(b), "=== childtest: starting at ") || !strings.HasSuffix(string(b), "hello\n") {
		t.Fatalf("log = %q", b)
	}
}

// WaitUp returns nil once up does, and an error with up's last error at the
// timeout.
func TestWaitUp(t *testing.T) {
	n := 0
	if err := toolbin.WaitUp(nil, 10*time.Second, "x", "log", func(context.Context) error {
		if n++; n < 3 {
			return errors.New("down")
		}
		return nil
	}); err != nil || n != 3 {
		t.Fatalf("WaitUp = %v after %d calls, want nil after 3", err, n)
	}
	err := toolbin.WaitUp(nil, 200*time.Millisecond, "x", "log", func(context.Context) error { return errors.New("down") })
	if err == nil || !strings.Contains(err.Error(), "last error: down") {
		t.Fatalf("WaitUp = %v, want the timeout with the last error", err)
	}
}
