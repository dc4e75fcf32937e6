package childtest

import (
	"os"
	"sync"
	"testing"
)

// Once is a main package that Build compiles at most once per test process,
// on the first call of Path, for all the tests that run it. The zero value
// is not usable: make one with NewOnce.
type Once struct {
	pkg    string
	once   sync.Once
	bin    string
	remove func()
	err    error
}

// NewOnce returns a Once for the main package pkg (an import path); nothing
// is built yet.
func NewOnce(pkg string) *Once { return &Once{pkg: pkg} }

// Path builds the package on the first call and returns the binary's path.
// It fails t if the build failed (on this call or an earlier one).
func (o *Once) Path(t testing.TB) string {
	t.Helper()
	o.once.Do(func() { o.bin, o.remove, o.err = Build(o.pkg) })
	if o.err != nil {
		t.Fatal(o.err)
	}
	return o.bin
}

// Remove removes the binary, if one was built: for a TestMain with several
// Onces, before the last one's RemoveAndExit.
func (o *Once) Remove() {
	if o.remove != nil {
		o.remove()
	}
}

// RemoveAndExit removes the binary, if one was built, then exits the process
// with code: the function for goleak.Cleanup in a TestMain, called once the
// tests have run and no test uses the binary any more.
func (o *Once) RemoveAndExit(code int) {
	o.Remove()
	os.Exit(code)
}
