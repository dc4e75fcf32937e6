package kubedrill

import (
	"maps"
	"slices"
	"testing"
)

// natSave is `iptables-save -t nat` as kube-proxy v1.37 writes it in the
// middle of a rollout: the Service's chain balances two endpoints; a third
// one's KUBE-SEP- chain is still there but no longer jumped to.
const natSave = `*nat
:KUBE-SERVICES - [0:0]
:KUBE-SVC-AAAA - [0:0]
:KUBE-SEP-ONE - [0:0]
:KUBE-SEP-TWO - [0:0]
:KUBE-SEP-OLD - [0:0]
-A KUBE-SERVICES -d 10.200.2.40/32 -p tcp -m comment --comment "drill-ns/drill-drainkit:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-AAAA
-A KUBE-SERVICES -d 10.200.2.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-BBBB
-A KUBE-SVC-AAAA ! -s 10.200.1.0/24 -d 10.200.2.40/32 -p tcp -m comment --comment "drill-ns/drill-drainkit:http cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ
-A KUBE-SVC-AAAA -m comment --comment "drill-ns/drill-drainkit:http -> 10.200.1.5:8080" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-ONE
-A KUBE-SVC-AAAA -m comment --comment "drill-ns/drill-drainkit:http -> 10.200.1.6:8080" -j KUBE-SEP-TWO
-A KUBE-SEP-ONE -s 10.200.1.5/32 -m comment --comment "drill-ns/drill-drainkit:http" -j KUBE-MARK-MASQ
-A KUBE-SEP-ONE -p tcp -m comment --comment "drill-ns/drill-drainkit:http" -m tcp -j DNAT --to-destination 10.200.1.5:8080
-A KUBE-SEP-TWO -p tcp -m comment --comment "drill-ns/drill-drainkit:http" -m tcp -j DNAT --to-destination 10.200.1.6:8080
-A KUBE-SEP-OLD -p tcp -m comment --comment "drill-ns/drill-drainkit:http" -m tcp -j DNAT --to-destination 10.200.1.4:8080
COMMIT
`

func TestParseNAT(t *testing.T) {
	got := parseNAT([]byte(natSave))
	ips := slices.Sorted(maps.Keys(got["drill-ns/drill-drainkit:http"]))
	if want := []string{"10.200.1.5", "10.200.1.6"}; !slices.Equal(ips, want) {
		t.Fatalf("drill-ns/drill-drainkit:http balances %v, want %v (10.200.1.4's chain is not jumped to)", ips, want)
	}
	if k, ok := got["default/kubernetes:https"]; !ok || len(k) != 0 {
		t.Fatalf("default/kubernetes:https = %v, %v: want listed with no endpoint chain in this save", k, ok)
	}
}

func TestRuleFields(t *testing.T) {
	got := ruleFields(`-A X -m comment --comment "a b:c -> d" -j Y`)
	want := []string{"-A", "X", "-m", "comment", "--comment", "a b:c -> d", "-j", "Y"}
	if !slices.Equal(got, want) {
		t.Fatalf("ruleFields = %q, want %q", got, want)
	}
}
