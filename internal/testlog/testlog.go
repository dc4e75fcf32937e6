// Package testlog holds the log sink drainkit's tests share: a buffer that
// a logger (or a child's output copier) and the test may use at once, and a
// debug-level slog.Logger writing into it that prints what it holds when the
// test fails. It is for tests only; nothing outside _test files imports it.
package testlog

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"
)

// Buffer is a bytes.Buffer safe for concurrent use. The zero value is an
// empty buffer ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// New returns a text logger at debug level writing into a new Buffer, and
// the Buffer. If t has failed when its cleanups run, the Buffer's content is
// logged under name ("registrar log", say).
func New(t testing.TB, name string) (*slog.Logger, *Buffer) {
	b := &Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s:\n%s", name, b.String())
		}
	})
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}
