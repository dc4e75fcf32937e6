package main

import (
	"io"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/childtest"
)

// child is the example running as a child process (see package childtest).
// Its addresses come from the "started" line, which the example logs from
// inside lifecycle.Run, after Run handles signals.
type child = childtest.Child

// startChild runs the example with args and env and waits for its "started"
// line.
func startChild(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	return childtest.Start(t, binary, env, args...)
}

func startChildNoWait(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	return childtest.StartNoWait(t, binary, env, args...)
}

// getWork sends GET /work?d=... to the service listener in the background.
type result struct {
	code int
	body string
	err  error
	at   time.Time
}

func getWork(c *child, d string) <-chan result {
	out := make(chan result, 1)
	go func() {
		resp, err := c.Client.Get("http://" + c.HTTP + "/work?d=" + d)
		if err != nil {
			out <- result{err: err, at: time.Now()}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		out <- result{code: resp.StatusCode, body: string(b), err: err, at: time.Now()}
	}()
	return out
}

// noWindow is an environment without a propagation window.
var noWindow = []string{"DRAINKIT_PROPAGATION_MIN=0s", "DRAINKIT_PROPAGATION_QUIET=0s", "DRAINKIT_PROPAGATION_MAX=0s"}
