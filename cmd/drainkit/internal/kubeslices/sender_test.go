package main

import (
	"strings"
	"testing"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/kubedrill/kubeload"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A --target that is not NAMESPACE/SERVICE is refused naming the flag, and
// outside a pod the sender says it needs the in-cluster config, before
// any request. On the cluster it runs in internal/kubetest/drilltest.
func TestNewSlicesSenderRefuses(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	for target, want := range map[string]string{
		"drill-drainkit":    "--target",
		"/drill-drainkit":   "--target",
		"ns/drill-drainkit": "in-cluster",
	} {
		_, err := newSlicesSender(kubeload.Options{Via: kubeload.EndpointSlices, Target: target})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--target %q: %v, want an error naming %s", target, err, want)
		}
	}
}
