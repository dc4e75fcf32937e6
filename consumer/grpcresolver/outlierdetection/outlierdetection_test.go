package outlierdetection_test

import (
	"encoding/json"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/grpc/balancer"

	"github.com/drainkit/drainkit/consumer/grpcresolver"
	_ "github.com/drainkit/drainkit/consumer/grpcresolver/outlierdetection"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRegistersTheFirstPolicy: with this package imported, grpc-go has the
// policy grpcresolver's ServiceConfig lists first, so channels use it
// rather than the round_robin fallback.
func TestRegistersTheFirstPolicy(t *testing.T) {
	var sc struct {
		LoadBalancingConfig []map[string]json.RawMessage `json:"loadBalancingConfig"`
	}
	if err := json.Unmarshal([]byte(grpcresolver.ServiceConfig), &sc); err != nil {
		t.Fatal(err)
	}
	if len(sc.LoadBalancingConfig) == 0 {
		t.Fatal("grpcresolver.ServiceConfig lists no loadBalancingConfig")
	}
	for name := range sc.LoadBalancingConfig[0] {
		if name != "outlier_detection_experimental" {
			t.Errorf("the first policy is %q, want outlier_detection_experimental", name)
		}
		if balancer.Get(name) == nil {
			t.Errorf("%s is not registered", name)
		}
	}
}
