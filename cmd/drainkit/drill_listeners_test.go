package main

import (
	"testing"
	"time"
)

// TestDrillExecSecondListener is issue 33's acceptance for item 4: `drill
// --exec` of examples/grpcservice, whose gRPC listener defaults to :9090
// beside the HTTP one, passes with no extra flag: the drill reads the
// program's listeners from its --help and gives --grpc-addr a free port in
// every replica (before, the second replica failed to bind :9090).
func TestDrillExecSecondListener(t *testing.T) {
	parallelDrill(t, 300)
	r := drainkit(t, 2*time.Minute, []string{"DRAINKIT_PROPAGATION_MIN=500ms"},
		"drill", "--json", "--exec", grpcserviceBin, "--replicas", "3", "--baseline", "500ms", "--tail", "500ms")
	out := parseDrill(t, r)
	if len(out.Strategies) != 1 {
		t.Fatalf("exit %d, strategies %+v, want one\nstderr:\n%s", r.code, out.Strategies, r.stderr)
	}
	if s := out.Strategies[0]; r.code != 0 || s.Failed != 0 || s.Requests == 0 || len(s.DrainSeconds) != 3 {
		t.Fatalf("exit %d, %d of %d failed, drains %v\nstderr:\n%s", r.code, s.Failed, s.Requests, s.DrainSeconds, r.stderr)
	}
}
