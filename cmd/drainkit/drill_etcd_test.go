package main

import (
	"testing"
	"time"

	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
)

// TestDrillEtcd runs drainkit and the exit baseline with etcd discovery
// against a real etcd server: replicas register under leases (kratos's key
// layout) and revoke them at the drain, consumers follow a revision-stamped
// watch. drainkit loses no request; the exit baseline does (its key stays
// until its lease expires). The shutdown baseline is left out: it revokes its
// lease just before closing its listener, and with a watch that learns it
// within milliseconds it loses only the requests of that race, sometimes
// none. Two strategies rather than three, and a 10s request timeout, keep a
// replica starved of CPU on a busy machine from counting as a lost request.
func TestDrillEtcd(t *testing.T) {
	parallelDrill(t, 600)
	s := etcdtest.Start(t)
	r := drainkit(t, 3*time.Minute, []string{"DRAINKIT_PROPAGATION_MIN=2s"},
		"drill", "--json", "--strategies", "drainkit,exit", "--replicas", "2", "--etcd", s.Endpoint,
		"--request-timeout", "10s", "--baseline", "1s", "--tail", "1s")
	out := parseDrill(t, r)
	if r.code != 0 {
		t.Errorf("exit status %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	if out.Config["discovery"] != "etcd watch" || out.Config["etcd"] != s.Endpoint {
		t.Errorf("discovery %v on %v", out.Config["discovery"], out.Config["etcd"])
	}
	if len(out.Strategies) != 2 {
		t.Fatalf("%d strategies, want drainkit, exit", len(out.Strategies))
	}
	for _, st := range out.Strategies {
		t.Logf("%s: %d failed of %d (%v); verdict %s", st.Name, st.Failed, st.Requests, st.FailuresByKind, st.Verdict)
		if st.Name != "drainkit" {
			if st.Failed == 0 {
				t.Errorf("%s: no failure: a drill that cannot show the difference proves nothing", st.Name)
			}
			continue
		}
		if st.Failed != 0 || st.Requests < 500 {
			t.Errorf("drainkit: %d failed of %d, want 0", st.Failed, st.Requests)
		}
		// Each replaced replica revoked its lease at the drain's start and
		// etcd confirmed the key gone.
		for _, rp := range st.Replicas {
			if rp.Role != "initial" {
				continue
			}
			dereg, ok := rp.Steps["deregistered"]
			_, confirmed := rp.Steps["confirmed"]
			if !ok || !confirmed || len(rp.StepErrors) > 0 || dereg > 1 {
				t.Errorf("r%d: steps %v, errors %v: want deregistered (within 1s) and confirmed", rp.ID, rp.Steps, rp.StepErrors)
			}
			if rp.ExitStatus != "exit status 0" {
				t.Errorf("r%d: %s", rp.ID, rp.ExitStatus)
			}
		}
	}
}
