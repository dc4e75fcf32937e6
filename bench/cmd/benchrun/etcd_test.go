package main

import (
	"os"
	"testing"

	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
)

// TestPropagationTrialEtcd: with a real etcd server from startEtcd, a trial
// registers the instance there and the etcd observer sees it leave after the
// drain's start; stop removes the server's data directory.
func TestPropagationTrialEtcd(t *testing.T) {
	bin := etcdtest.Binary(t)
	srv, err := startEtcd(bin)
	if err != nil {
		t.Fatal(err)
	}
	got, err := propagationTrial(registries{etcd: srv}, 0)
	srv.stop()
	if err != nil {
		t.Fatal(err)
	}
	if ms, ok := got[obsEtcd]; !ok || ms <= 0 {
		t.Errorf("etcd observer latency = %v (present %v), want > 0 ms; all: %v", ms, ok, got)
	}
	if _, err := os.Stat(srv.dir); !os.IsNotExist(err) {
		t.Errorf("data directory %s after stop: %v, want it removed", srv.dir, err)
	}
}

// TestPropagationRowsEtcd: the etcd row is measured when a server ran and
// "not available" (naming the variable) only when there was none.
func TestPropagationRowsEtcd(t *testing.T) {
	lat := map[string]Sample{obsReadyz: {1}, obsHealth: {1}, obsEtcd: {4, 5}}
	for _, tc := range []struct {
		regs    registries
		verdict string
	}{
		{registries{etcd: &etcdServer{}}, Pass},
		{registries{}, "not available"},
	} {
		tab := &Table{}
		addPropagationRows(&env{}, tab, lat, tc.regs)
		var row *Row
		for i := range tab.Rows {
			if tab.Rows[i].Cells[0] == obsEtcd {
				row = &tab.Rows[i]
			}
		}
		if row == nil || row.Verdict != tc.verdict {
			t.Fatalf("etcd row = %+v, want verdict %q", row, tc.verdict)
		}
		if tc.verdict == Pass && row.Cells[4] != "2" {
			t.Errorf("etcd row trials = %q, want 2", row.Cells[4])
		}
	}
}
