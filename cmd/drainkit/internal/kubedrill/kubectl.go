package kubedrill

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// kubectl runs the kubectl command against the drill's namespace.
type kubectl struct {
	bin, kubeconfig, namespace string
}

func (k kubectl) args(args []string) []string {
	var a []string
	if k.kubeconfig != "" {
		a = append(a, "--kubeconfig", k.kubeconfig)
	}
	if k.namespace != "" {
		a = append(a, "--namespace", k.namespace)
	}
	return append(a, args...)
}

// run runs kubectl with stdin (nil: none) and returns its standard output;
// the error carries its standard error.
func (k kubectl) run(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, k.bin, k.args(args)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}

// stream is a long-running kubectl (a watch, logs -f) whose standard
// output a reader goroutine consumes.
type stream struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan struct{} // closed when the reader returned
	err    error         // the reader's, set before done closes
}

// start runs kubectl args until ctx ends or it exits by itself, calling
// read with its standard output in a goroutine.
func (k kubectl) start(ctx context.Context, read func(io.Reader) error, args ...string) (*stream, error) {
	s := &stream{cmd: exec.CommandContext(ctx, k.bin, k.args(args)...), done: make(chan struct{})}
	s.cmd.Stderr = &s.stderr
	// A killed kubectl's pipe is closed at once, whatever it started.
	s.cmd.WaitDelay = time.Second
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("kubectl %s: %w", strings.Join(args, " "), err)
	}
	go func() {
		defer close(s.done)
		rerr := read(out)
		_, _ = io.Copy(io.Discard, out)
		werr := s.cmd.Wait()
		if rerr == nil && werr != nil && ctx.Err() == nil {
			rerr = fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), werr, bytes.TrimSpace(s.stderr.Bytes()))
		}
		s.err = rerr
	}()
	return s, nil
}

// wait waits for the stream's end and returns its error.
func (s *stream) wait() error {
	<-s.done
	return s.err
}

// watchEvent is one event of `kubectl get --watch --output-watch-events
// -o json`.
type watchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// watch runs `kubectl get kind --watch` in the namespace and calls fn with
// each event and the instant it was read, until ctx ends.
func (k kubectl) watch(ctx context.Context, kind string, fn func(at time.Time, ev watchEvent)) (*stream, error) {
	return k.start(ctx, func(r io.Reader) error {
		dec := json.NewDecoder(r)
		for {
			var ev watchEvent
			if err := dec.Decode(&ev); err != nil {
				if err == io.EOF || ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("kubectl get %s --watch: %w", kind, err)
			}
			fn(time.Now(), ev)
		}
	}, "get", kind, "--watch", "--output-watch-events", "-o", "json")
}

// lines runs kubectl args and calls fn with each line of its output.
func (k kubectl) lines(ctx context.Context, fn func(line string), args ...string) (*stream, error) {
	return k.start(ctx, func(r io.Reader) error {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 64<<20) // a load summary is one long line
		for sc.Scan() {
			fn(sc.Text())
		}
		return sc.Err()
	}, args...)
}

// changes is a broadcast of "something changed": Wait returns a channel
// closed at the next Notify.
type changes struct {
	mu sync.Mutex
	ch chan struct{}
}

func newChanges() *changes { return &changes{ch: make(chan struct{})} }

func (c *changes) Notify() {
	c.mu.Lock()
	close(c.ch)
	c.ch = make(chan struct{})
	c.mu.Unlock()
}

func (c *changes) Wait() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ch
}
