// Package helpflags reads the flags a drainkit.Main program lists in its
// --help, for the tests that check which settings a program offers.
package helpflags

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/drainkit/drainkit"
)

var flagLine = regexp.MustCompile(`(?m)^\s+--([a-z0-9-]+)`)

// Flags runs drainkit.Run with --help, an HTTP listener named "http", no
// environment and opts, and returns the flags it lists (without dashes),
// sorted. It fails t unless the run exits 0.
func Flags(t testing.TB, opts ...drainkit.Option) []string {
	t.Helper()
	var out bytes.Buffer
	opts = append([]drainkit.Option{drainkit.WithHTTP("http", ":0", http.NotFoundHandler()),
		drainkit.WithEnv([]string{}), drainkit.WithOutput(&out)}, opts...)
	if code := drainkit.Run(context.Background(), []string{"--help"}, opts...); code != 0 {
		t.Fatalf("--help: exit %d: %s", code, out.String())
	}
	var flags []string
	for _, m := range flagLine.FindAllStringSubmatch(out.String(), -1) {
		flags = append(flags, m[1])
	}
	slices.Sort(flags)
	return flags
}

// Registry returns the registry flags (--registry-*) of Flags.
func Registry(t testing.TB, opts ...drainkit.Option) []string {
	t.Helper()
	var out []string
	for _, f := range Flags(t, opts...) {
		if strings.HasPrefix(f, "registry-") {
			out = append(out, f)
		}
	}
	return out
}
