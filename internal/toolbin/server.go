package toolbin

import (
	"context"
	"errors"
	"net/http"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is the process of an external server that a test harness starts,
// stops and starts again (on the same ports, with the same log): the running
// command, its exit channel, and the closers of the clients handed out for
// it. Set the exported fields before the first Start and leave them; the
// methods are safe for concurrent use. The zero value of the unexported
// state is a stopped server.
type Server struct {
	// Name titles the banner line of each start in the log, e.g.
	// "consultest" (see Launch).
	Name string
	// What starts the errors of Start and Signal, e.g. "consultest: agent".
	What string
	// LogPath is the file the output goes to, appended across restarts.
	LogPath string
	// StartTimeout bounds how long Start waits for the server to be up.
	StartTimeout time.Duration
	// StopGrace is how long Stop waits after SIGTERM before it sends
	// SIGKILL; zero sends SIGKILL at once.
	StopGrace time.Duration

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  <-chan struct{}
	closers []func()
}

// Start launches cmd (see Launch) and waits until up returns nil (see
// WaitUp, with StartTimeout and What). up gets a probe client for the
// server's HTTP API: no keep-alive, a 2 s timeout per request. On an error
// the process is stopped before Start returns the error.
func (s *Server) Start(cmd *exec.Cmd, up func(context.Context, *http.Client) error) error {
	exited, err := Launch(cmd, s.LogPath, s.Name)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * time.Second}
	err = WaitUp(exited, s.StartTimeout, s.What, s.LogPath, func(ctx context.Context) error { return up(ctx, hc) })
	if err != nil {
		s.Stop()
		return err
	}
	return nil
}

// Stop ends the process (SIGTERM and up to StopGrace for it to exit, then
// SIGKILL; or SIGKILL at once when StopGrace is zero) and waits for it to
// exit. It is idempotent, and does nothing before the first Start.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	if s.StopGrace > 0 {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
			return
		case <-time.After(s.StopGrace):
		}
	}
	_ = cmd.Process.Kill()
	<-exited
}

// Restart stops the process (see Stop) and calls start, which starts it
// again (through Start); it fails t with start's error and the log's tail
// (a restart binds the same ports, which another process may hold by then).
func (s *Server) Restart(t testing.TB, start func() error) {
	t.Helper()
	s.Stop()
	if err := start(); err != nil {
		t.Error(err)
		LogTail(t, s.LogPath, s.What+" log")
		t.FailNow()
	}
}

// Running reports whether the process is running (started and not stopped).
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// Signal sends sig to the process; the error is "<What> not running" when
// it is stopped.
func (s *Server) Signal(sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return errors.New(s.What + " not running")
	}
	return s.cmd.Process.Signal(sig)
}

// AddCloser records close, which releases a client of the server, for
// CloseClients.
func (s *Server) AddCloser(close func()) {
	s.mu.Lock()
	s.closers = append(s.closers, close)
	s.mu.Unlock()
}

// CloseClients calls the closers recorded so far, in the order they were
// added, and forgets them.
func (s *Server) CloseClients() {
	s.mu.Lock()
	closers := s.closers
	s.closers = nil
	s.mu.Unlock()
	for _, c := range closers {
		c()
	}
}
