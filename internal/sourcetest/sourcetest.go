// Package sourcetest reads, in tests, what a registry.Source delivers to
// consumers: the registry plugins' tests check with it that what a
// registrar wrote comes back through their Source.
package sourcetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/drainkit/drainkit/registry"
)

// Listed watches src until a view lists an instance at hostPort
// ("127.0.0.1:8080", registry.Instance.HostPort) and returns that
// instance as delivered. It fails t (t.Fatalf, so from the test's
// goroutine only) when no view lists one within timeout, or when Watch
// fails otherwise.
func Listed(t testing.TB, src registry.Source, hostPort string, timeout time.Duration) registry.Instance {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var got registry.Instance
	found := false
	err := src.Watch(ctx, func(v registry.View) {
		for _, in := range v.Instances {
			if !found && in.HostPort() == hostPort {
				got, found = in, true
				cancel()
			}
		}
	})
	if !found || !errors.Is(err, context.Canceled) {
		t.Fatalf("no view listed an instance at %s within %s (Watch: %v)", hostPort, timeout, err)
	}
	return got
}
