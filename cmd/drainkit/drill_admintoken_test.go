package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDrillSendsAdminToken: the README program (examples/minimal) with
// DRAINKIT_ADMIN_TOKEN set requires the token on POST /drain from every
// caller, loopback included. A --prestop drill on --exec of it sends the
// token from the replicas' environment on its preStop calls (and GET
// /state polls): both preStop calls answer 200 after the propagation
// window and nothing fails; the token appears in no output.
func TestDrillSendsAdminToken(t *testing.T) {
	parallelDrill(t, 300)
	const token = "drill-test-token-4f1c9a"
	report := filepath.Join(t.TempDir(), "report.html")
	r := drainkit(t, 2*time.Minute, []string{"DRAINKIT_PROPAGATION_MIN=1s", "DRAINKIT_ADMIN_TOKEN=" + token},
		"drill", "--json", "--prestop", "--exec", minimalBin, "--replicas", "2", "--baseline", "500ms", "--tail", "500ms", "--report", report)
	out := parseDrill(t, r)
	if len(out.Strategies) != 1 {
		t.Fatalf("strategies %+v, want one", out.Strategies)
	}
	s := out.Strategies[0]
	var preStopErrs []string
	for _, rp := range s.Replicas {
		if rp.PreStopErr != "" {
			preStopErrs = append(preStopErrs, rp.PreStopErr)
		}
	}
	if r.code != 0 || s.Failed != 0 || s.PreStopCalls != 2 || s.PreStopFailed != 0 || s.PreStopMedian < 1 {
		t.Errorf("exit %d: %d failed, preStop %d calls, %d failed (%v), median %.2fs: want 2 calls answered after the 1s window, nothing failed\nstderr:\n%s",
			r.code, s.Failed, s.PreStopCalls, s.PreStopFailed, preStopErrs, s.PreStopMedian, r.stderr)
	}
	html, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"stdout": r.stdout, "stderr": r.stderr, "the report": string(html)} {
		if strings.Contains(text, token) {
			t.Errorf("%s shows the admin token", name)
		}
	}
}
