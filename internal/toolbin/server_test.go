package toolbin_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/toolbin"
)

// A Server with a StopGrace stops its process with SIGTERM first; Signal
// names What once it is stopped; Restart starts it again; the closers run in
// order, once.
func TestServerStopRestartClosers(t *testing.T) {
	dir := t.TempDir()
	s := &toolbin.Server{Name: "servertest", What: "servertest: sh", LogPath: filepath.Join(dir, "sh.log"),
		StartTimeout: 10 * time.Second, StopGrace: 10 * time.Second}
	ready := filepath.Join(dir, "ready")
	start := func() error {
		_ = os.Remove(ready)
		cmd := exec.Command("sh", "-c", `trap 'echo got TERM; exit 0' TERM; touch `+ready+`; while :; do sleep 0.05; done`)
		return s.Start(cmd, func(context.Context, *http.Client) error {
			_, err := os.Stat(ready)
			return err
		})
	}
	if err := start(); err != nil {
		t.Fatal(err)
	}
	if !s.Running() {
		t.Fatal("not Running after Start")
	}
	s.Restart(t, start)
	if !s.Running() {
		t.Fatal("not Running after Restart")
	}
	s.Stop()
	s.Stop() // idempotent
	if s.Running() {
		t.Fatal("Running after Stop")
	}
	b, _ := os.ReadFile(s.LogPath)
	if n := strings.Count(string(b), "=== servertest: starting at "); n != 2 {
		t.Fatalf("%d start banners in the log, want 2:\n%s", n, b)
	}
	if n := strings.Count(string(b), "got TERM"); n != 2 {
		t.Fatalf("%d SIGTERMs in the log, want 2 (one per stop):\n%s", n, b)
	}
	if err := s.Signal(syscall.SIGCONT); err == nil || err.Error() != "servertest: sh not running" {
		t.Fatalf("Signal after Stop = %v", err)
	}
	var closed []int
	s.AddCloser(func() { closed = append(closed, 1) })
	s.AddCloser(func() { closed = append(closed, 2) })
	s.CloseClients()
	s.CloseClients()
	if len(closed) != 2 || closed[0] != 1 || closed[1] != 2 {
		t.Fatalf("closers ran %v, want [1 2]", closed)
	}
}

// A Server whose up check never passes is stopped and Start reports the
// timeout with up's last error; without a StopGrace it is killed at once.
func TestServerStartTimeout(t *testing.T) {
	s := &toolbin.Server{Name: "servertest", What: "servertest: sh", LogPath: filepath.Join(t.TempDir(), "sh.log"),
		StartTimeout: 200 * time.Millisecond}
	cmd := exec.Command("sh", "-c", `trap 'echo got TERM' TERM; while :; do sleep 0.05; done`)
	err := s.Start(cmd, func(context.Context, *http.Client) error { return errors.New("down") })
	if err == nil || !strings.HasPrefix(err.Error(), "servertest: sh not up within 200ms (last error: down)") {
		t.Fatalf("Start = %v, want the timeout", err)
	}
	if s.Running() {
		t.Fatal("Running after a failed Start")
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("process state %v, want killed by SIGKILL", cmd.ProcessState)
	}
}
