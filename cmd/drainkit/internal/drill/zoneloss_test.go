package drill

import (
	"fmt"
	"strings"
	"testing"
)

// TestZoneEnv: a replica's DRAINKIT_REGISTRY_META keeps the pairs the
// drill's environment gave (its last value, as the process sees it) with
// the zone of the replica's half replacing any zone there.
func TestZoneEnv(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		id   int
		want string
	}{
		{nil, 1, "DRAINKIT_REGISTRY_META=zone=a"},
		{nil, 3, "DRAINKIT_REGISTRY_META=zone=b"},
		{[]string{"DRAINKIT_REGISTRY_META=zone=x", "DRAINKIT_REGISTRY_META=track=canary, zone=x,"}, 2, "DRAINKIT_REGISTRY_META=track=canary,zone=a"},
		{[]string{"DRAINKIT_REGISTRY_ADDRESS=10.0.0.1"}, 4, "DRAINKIT_REGISTRY_META=zone=b"},
	} {
		if got := zoneEnv(tc.env, tc.id, 4); got != tc.want {
			t.Errorf("zoneEnv(%q, r%d) = %q, want %q", tc.env, tc.id, got, tc.want)
		}
	}
}

// TestRegisteredZones: a registry view whose replicas carry their zones
// passes; one without (a binary that does not read registry.meta) fails
// naming the replica and DRAINKIT_REGISTRY_META; one listing no replica
// fails rather than passing unchecked.
func TestRegisteredZones(t *testing.T) {
	disc := feedDiscovery{newRegistryFeed("svc", "test")}
	defer disc.Close()
	for id := 1; id <= 2; id++ {
		disc.Add(&Replica{ID: id, HTTPAddr: fmt.Sprintf("127.0.0.1:%d", 8000+id)})
	}
	v := pushView(1, 1, 2) // r1 on port 8001, r2 on 8002
	v.Instances[0].Meta = map[string]string{"zone": "a"}
	v.Instances[1].Meta = map[string]string{"zone": "b"}
	disc.receive(v)
	if err := registeredZones(disc, 2); err != nil {
		t.Fatalf("zones registered: %v", err)
	}
	v.Revision++
	v.Instances[0].Meta, v.Instances[1].Meta = nil, nil
	disc.receive(v)
	err := registeredZones(disc, 2)
	if err == nil || !strings.Contains(err.Error(), `metadata zone=""`) || !strings.Contains(err.Error(), "DRAINKIT_REGISTRY_META") {
		t.Fatalf("zones missing: %v", err)
	}
	v.Revision++
	v.Instances = nil
	disc.receive(v)
	if err := registeredZones(disc, 2); err == nil || !strings.Contains(err.Error(), "listed none of the replicas") {
		t.Fatalf("no replica listed: %v, want the check to fail", err)
	}
}
