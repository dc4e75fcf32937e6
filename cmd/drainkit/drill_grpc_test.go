package main

import (
	"testing"
	"time"
)

// drillGRPC runs `drill --protocol PROTO --strategies drainkit,shutdown,kill
// --sequential` (one strategy at a time, each with the whole machine) and
// returns the strategies' summaries by name.
func drillGRPC(t *testing.T, env []string, args ...string) map[string]struct{ failed, requests, retried int } {
	t.Helper()
	all := append([]string{"drill", "--json", "--sequential", "--strategies", "drainkit,shutdown,kill"}, args...)
	out := parseDrill(t, drainkit(t, 4*time.Minute, env, all...))
	if len(out.Strategies) != 3 {
		t.Fatalf("%d strategies reported, want 3", len(out.Strategies))
	}
	byName := map[string]struct{ failed, requests, retried int }{}
	for _, s := range out.Strategies {
		byName[s.Name] = struct{ failed, requests, retried int }{s.Failed, s.Requests, s.Resent}
		t.Logf("%s (%s consumer): %d of %d failed %v, %d resent", s.Name, s.Consumer, s.Failed, s.Requests, s.FailuresByKind, s.Resent)
	}
	return byName
}

// TestDrillGRPC: unary gRPC calls through the drill's two gRPC consumers,
// and server streams across the drain.
//
//   - drainkit consumer (grpcresolver: health checking, retry policy for
//     the idempotent TestService): the drainkit strategy loses no call, nor
//     does kill: the calls SIGKILL cut are retried on another instance;
//   - naive consumer (ClientConns with grpc-go's defaults to a
//     connection-level balancer over the discovery's lagging list, as to a
//     Kubernetes Service): the drainkit strategy loses none, its listener
//     staying open through the propagation window (the default 5s, longer
//     than the probes' 2s to drop an instance; the 1s of shortEnv is not);
//     shutdown loses calls: after GracefulStop's GOAWAY the ClientConns
//     reconnect through the balancer, which hands some of them to the
//     closed listener, and pick_first fails their calls until a reconnect
//     after the backoff lands on a live instance; kill loses the calls in
//     flight and the same way;
//   - streams held 4s, naive consumer: drainkit ends them at the drain
//     signal, cleanly, and they are re-opened elsewhere (no failure);
//     GracefulStop waits for them until drain.timeout (2s here) and cuts
//     them; SIGKILL cuts them at once.
func TestDrillGRPC(t *testing.T) {
	parallelDrill(t, 600)
	unary := []string{"--protocol", "grpc", "--replicas", "2", "--baseline", "1s", "--tail", "1s"}
	t.Run("drainkit-consumer", func(t *testing.T) {
		got := drillGRPC(t, shortEnv, append([]string{"--consumer", "drainkit"}, unary...)...)
		if dk := got["drainkit"]; dk.failed != 0 || dk.requests < 1000 {
			t.Errorf("drainkit: %d of %d calls failed, want 0 of at least 1000", dk.failed, dk.requests)
		}
		if k := got["kill"]; k.failed != 0 || k.retried == 0 {
			t.Errorf("kill: %d of %d calls failed, %d resent; want none failed, the calls cut by SIGKILL retried by the retry policy", k.failed, k.requests, k.retried)
		}
	})
	t.Run("naive-consumer", func(t *testing.T) {
		got := drillGRPC(t, nil, append([]string{"--consumer", "naive"}, unary...)...)
		if dk := got["drainkit"]; dk.failed != 0 || dk.requests < 1000 {
			t.Errorf("drainkit: %d of %d calls failed, want 0 of at least 1000", dk.failed, dk.requests)
		}
		for _, name := range []string{"shutdown", "kill"} {
			if s := got[name]; s.failed == 0 {
				t.Errorf("%s with the naive gRPC consumer: none of %d calls failed; the balancer hands reconnects to the stopped instance", name, s.requests)
			}
		}
	})
	t.Run("naive-consumer-streams", func(t *testing.T) {
		got := drillGRPC(t, []string{"DRAINKIT_DRAIN_TIMEOUT=2s"}, "--protocol", "grpc-stream", "--stream-hold", "4s", "--request-timeout", "6s", "--rate", "30",
			"--consumer", "naive", "--replicas", "2", "--baseline", "1s", "--tail", "1s")
		if dk := got["drainkit"]; dk.failed != 0 || dk.retried == 0 {
			t.Errorf("drainkit: %d of %d streams failed, %d re-opened; want none failed and some re-opened at the drain signal", dk.failed, dk.requests, dk.retried)
		}
		for _, name := range []string{"shutdown", "kill"} {
			if s := got[name]; s.failed == 0 {
				t.Errorf("%s with the naive gRPC consumer: no stream failed", name)
			}
		}
	})
}
