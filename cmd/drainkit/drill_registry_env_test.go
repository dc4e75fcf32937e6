package main

import (
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
)

// TestDrillExecEtcdByTheBook drills, against a real etcd server, a service
// that reads its registry settings through the config package only
// (testdata/bookservice: DRAINKIT_REGISTRY_ETCD_ENDPOINTS and friends, no
// ETCD_ENDPOINTS): the drill hands the binary those variables, so it
// registers under the service name and prefix the drill watches, and the
// drill passes.
func TestDrillExecEtcdByTheBook(t *testing.T) {
	parallelDrill(t, 300)
	s := etcdtest.Start(t)
	r := drainkit(t, 2*time.Minute, []string{"DRAINKIT_PROPAGATION_MIN=1s", "ETCD_ENDPOINTS=", "DRAINKIT_REGISTRY_ETCD_ENDPOINTS="},
		"drill", "--json", "--exec", bookBin, "--etcd", s.Endpoint, "--replicas", "2", "--request-timeout", "10s", "--baseline", "500ms", "--tail", "500ms")
	out := parseDrill(t, r)
	if r.code != 0 || len(out.Strategies) != 1 {
		t.Fatalf("exit %d, %d strategies\nstderr:\n%s", r.code, len(out.Strategies), r.stderr)
	}
	if st := out.Strategies[0]; st.Name != "bookservice" || st.Failed != 0 || len(st.DrainSeconds) != 2 {
		t.Fatalf("%s: %d failed, drains %v", st.Name, st.Failed, st.DrainSeconds)
	}
}

// TestDrillExecNeverListedNamesTheVariables: a binary that never registers
// (testdata/bookservice with BOOKSERVICE_REGISTER=off) fails the drill with
// "never listed by discovery", and the error names the registry variables
// the binary was given, with their values, except a secret's
// (CONSUL_HTTP_TOKEN here, from the drill's own environment), whose value
// never shows. A binary that wires no registrar at all (examples/minimal)
// refuses those variables at its start (exit 2, naming the setting), which
// the drill reports from its stderr.
func TestDrillExecNeverListedNamesTheVariables(t *testing.T) {
	parallelDrill(t, 300)
	s := etcdtest.Start(t)
	const secret = "consul-token-5e1f-never-printed"
	r := drainkit(t, 2*time.Minute, []string{"CONSUL_HTTP_TOKEN=" + secret, "BOOKSERVICE_REGISTER=off"},
		"drill", "--json", "--exec", bookBin, "--etcd", s.Endpoint, "--replicas", "1", "--baseline", "0s", "--tail", "0s")
	out := parseDrillAllowingErrors(t, r)
	if r.code == 0 || len(out.Strategies) != 1 {
		t.Fatalf("exit %d, %d strategies: want a failed drill", r.code, len(out.Strategies))
	}
	msg := out.Strategies[0].Error
	for _, want := range []string{"never listed by discovery", "the replica was given",
		"DRAINKIT_REGISTRY_ETCD_ENDPOINTS=" + s.Endpoint, "ETCD_ENDPOINTS=" + s.Endpoint,
		"DRAINKIT_REGISTRY_ETCD_PREFIX=/microservices", "DRAINKIT_REGISTRY_SERVICE=bookservice", "CONSUL_HTTP_TOKEN=(set, not shown)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(r.stdout, secret) || strings.Contains(r.stderr, secret) {
		t.Errorf("the token's value was printed")
	}

	r = drainkit(t, 2*time.Minute, nil,
		"drill", "--json", "--exec", minimalBin, "--etcd", s.Endpoint, "--replicas", "1", "--baseline", "0s", "--tail", "0s")
	out = parseDrillAllowingErrors(t, r)
	if r.code == 0 || len(out.Strategies) != 1 ||
		!strings.Contains(out.Strategies[0].Error, "registry.service (from env DRAINKIT_REGISTRY_SERVICE) is set, but this program wires no registrar") {
		t.Errorf("examples/minimal with --etcd: exit %d, %+v: want its start refusing the registry setting", r.code, out.Strategies)
	}
}
