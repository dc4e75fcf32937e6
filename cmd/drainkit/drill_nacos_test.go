package main

import (
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/nacostest"
)

// TestDrillNacosOfflineThenKill reproduces the first incident behind
// drainkit with the drill against a real Nacos server: replicas register in
// Nacos, and each old one is marked offline through the server's open API
// (the console's "offline"), then kill -9'd. Naive consumers, polling the
// open API every 5 s as a Nacos 1.x client does, fail requests (connection
// refused) until their next poll; drainkit consumers on registry/nacos's
// Source fail none. The same drill, run twice: once per consumer kind.
func TestDrillNacosOfflineThenKill(t *testing.T) {
	s := nacostest.Start(t)
	args := []string{"drill", "--json", "--strategies", "offline-kill", "--replicas", "3", "--nacos", s.Addr,
		"--request-timeout", "10s", "--baseline", "1s", "--tail", "1s"}
	failed := map[string]int{}
	for _, kind := range []string{"naive", "drainkit"} {
		r := drainkit(t, 3*time.Minute, nil, append(args, "--consumer", kind)...)
		out := parseDrill(t, r)
		if out.Config["discovery"] != "nacos" || out.Config["nacos"] != s.Addr || out.Config["nacos_poll_s"] != 5.0 {
			t.Errorf("%s: config %v", kind, out.Config)
		}
		if len(out.Strategies) != 1 || out.Strategies[0].Name != "offline-kill" {
			t.Fatalf("%s: strategies %+v, want offline-kill", kind, out.Strategies)
		}
		st := out.Strategies[0]
		failed[kind] = st.Failed
		t.Logf("%s consumers: %d failed of %d (%v); verdict %s", kind, st.Failed, st.Requests, st.FailuresByKind, st.Verdict)
		if st.Requests < 1000 {
			t.Errorf("%s: %d requests, want >= 1000", kind, st.Requests)
		}
		wantCode := map[string]int{"naive": 1, "drainkit": 0}[kind]
		if r.code != wantCode {
			t.Errorf("%s: exit status %d, want %d\nstderr:\n%s", kind, r.code, wantCode, r.stderr)
		}
		for _, rp := range st.Replicas {
			if rp.Role != "initial" {
				continue
			}
			if rp.Offline == nil || rp.SIGTERM == nil || rp.Signal != "SIGKILL" || *rp.SIGTERM < *rp.Offline {
				t.Errorf("%s: r%d: offline at %v, %s at %v: want the console's offline, then SIGKILL", kind, rp.ID, rp.Offline, rp.Signal, rp.SIGTERM)
			}
		}
	}
	if failed["naive"] == 0 {
		t.Error("the naive consumers failed no request: the incident was not reproduced")
	}
	if failed["drainkit"] != 0 {
		t.Errorf("the drainkit consumers failed %d requests, want 0", failed["drainkit"])
	}
}
