//go:build linux

package kubetest

import (
	"context"
	"strings"
	"testing"
)

// MustKubectl runs Kubectl for a test: stdin "" sends none; an error fails
// t (Fatal, from the test's goroutine only). It returns the output without
// surrounding white space.
func (c *Cluster) MustKubectl(t testing.TB, ctx context.Context, stdin string, args ...string) string {
	t.Helper()
	var in []byte
	if stdin != "" {
		in = []byte(stdin)
	}
	out, err := c.Kubectl(ctx, in, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
