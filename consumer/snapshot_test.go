package consumer_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/registry"
)

// down is a source whose registry does not answer: an error view, then
// nothing until its context ends.
var down = registry.SourceFunc(func(ctx context.Context, fn func(registry.View)) error {
	fn(registry.View{Service: "orders", Err: errors.New("connection refused"), ErrAt: time.Now()})
	<-ctx.Done()
	return ctx.Err()
})

// writeSnapshotRun runs a watcher over a feed listing bs with SnapshotPath,
// as an earlier run of the process would, its evidence received age ago.
func writeSnapshotRun(t *testing.T, path string, age time.Duration, bs ...*backend) {
	t.Helper()
	f := newFeed()
	v := f.view(0, 7, bs...)
	v.Received = time.Now().Add(-age)
	f.ch <- v
	w, _, _ := newClient(t, f, consumer.WatcherOptions{SnapshotPath: path, FullReadInterval: -1}, consumer.Options{})
	eventually(t, 5*time.Second, "the snapshot written", func() bool { _, err := os.Stat(path); return err == nil })
	w.Close()
}

// A consumer started while its registry is down serves the last-good
// snapshot of an earlier run, reports it with its real age, and drops it
// for the registry's first answer.
func TestSnapshotServedWhileSourceDownAtStart(t *testing.T) {
	a, b := newBackend(t, "a", nil), newBackend(t, "b", nil)
	path := filepath.Join(t.TempDir(), "orders.json")
	writeSnapshotRun(t, path, 10*time.Second, a, b)

	live := newFeed()
	started := make(chan struct{})
	src := registry.SourceFunc(func(ctx context.Context, fn func(registry.View)) error {
		fn(registry.View{Service: "orders", Err: errors.New("connection refused"), ErrAt: time.Now()})
		close(started)
		return live.Watch(ctx, fn)
	})
	w, tr, logs := newClient(t, src, consumer.WatcherOptions{SnapshotPath: path, FullReadInterval: -1}, consumer.Options{})
	<-started
	for i := range 4 {
		if _, err := do(tr, "GET", ""); err != nil {
			t.Fatalf("GET %d on the snapshot: %v", i, err)
		}
	}
	s := w.Status()
	if s.Snapshot != path || s.Age < 10*time.Second || s.Age > 20*time.Second || s.Instances != 2 || s.Revision != 7 {
		t.Errorf("status %+v: want the snapshot %s, 2 instances, revision 7, age about 10s", s, path)
	}
	if !strings.Contains(tr.Status().String(), "snapshot=") || !strings.Contains(logs.String(), "serving the last-good snapshot") {
		t.Errorf("status line %q / logs: want the snapshot named", tr.Status())
	}
	// The registry's first answer replaces it, whatever its revision; an
	// empty one too, without the empty-list hold (the snapshot is no answer).
	live.push(1)
	eventually(t, 5*time.Second, "the live view", func() bool { s := w.Status(); return s.Snapshot == "" && s.Instances == 0 })
	if _, err := do(tr, "GET", ""); !errors.Is(err, consumer.ErrNoInstance) {
		t.Errorf("GET after an empty live answer: %v, want ErrNoInstance", err)
	}
	// A live empty list is not written over the last good one.
	if v, _ := os.ReadFile(path); !strings.Contains(string(v), `"revision": 7`) && !strings.Contains(string(v), `"revision":7`) {
		t.Errorf("snapshot file after an empty live answer: %s, want revision 7 kept", v)
	}
}

// A snapshot older than MaxStaleness is refused at start, clearly, and
// requests fail at once instead of waiting for a view.
func TestSnapshotOlderThanMaxStalenessRefused(t *testing.T) {
	a := newBackend(t, "a", nil)
	path := filepath.Join(t.TempDir(), "orders.json")
	writeSnapshotRun(t, path, 2*time.Minute, a)
	lg, logs := testLogger(t)
	w, err := consumer.NewWatcher(consumer.WatcherOptions{Source: down, Service: "orders", SnapshotPath: path,
		MaxStaleness: time.Minute, FullReadInterval: -1, Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = w.Wait(ctx)
	if !errors.Is(err, consumer.ErrDegraded) || !strings.Contains(err.Error(), "older than MaxStaleness 1m0s") || !strings.Contains(err.Error(), path) {
		t.Fatalf("Wait: %v, want ErrDegraded naming the snapshot and MaxStaleness", err)
	}
	tr, err := consumer.NewTransport(w, "", consumer.Options{Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	start := time.Now()
	if _, err := do(tr, "GET", ""); err == nil || !strings.Contains(err.Error(), "snapshot") || time.Since(start) > time.Second {
		t.Errorf("GET: %v after %v, want a prompt error naming the snapshot", err, time.Since(start))
	}
	if a.hits.Load() != 0 || !w.Degraded() || w.Status().Snapshot != "" {
		t.Errorf("the refused snapshot was used: hits %d, status %+v", a.hits.Load(), w.Status())
	}
	if !strings.Contains(logs.String(), "refusing it") {
		t.Error("the refusal was not logged")
	}
}

// A snapshot served at start is withdrawn once it grows older than
// MaxStaleness while the source still fails: requests then fail with
// ErrDegraded instead of using it.
func TestSnapshotWithdrawnPastMaxStaleness(t *testing.T) {
	a := newBackend(t, "a", nil)
	path := filepath.Join(t.TempDir(), "orders.json")
	writeSnapshotRun(t, path, 500*time.Millisecond, a)
	w, tr, _ := newClient(t, down, consumer.WatcherOptions{SnapshotPath: path, MaxStaleness: time.Second, FullReadInterval: -1}, consumer.Options{})
	if _, err := do(tr, "GET", ""); err != nil || w.Status().Snapshot != path {
		t.Fatalf("GET on a fresh snapshot: %v (status %+v)", err, w.Status())
	}
	eventually(t, 5*time.Second, "the snapshot withdrawn", func() bool {
		_, err := do(tr, "GET", "")
		return errors.Is(err, consumer.ErrDegraded) && w.Degraded()
	})
	if age := w.Status().Age; age < time.Second {
		t.Errorf("withdrawn at age %v, want past MaxStaleness 1s", age)
	}
}
