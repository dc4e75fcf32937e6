package cpubench_test

import (
	"runtime"
	"testing"

	"go.uber.org/goleak"

	"github.com/drainkit/drainkit/internal/cpubench"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A loop that only computes reports CPU time per operation, and not more
// than its cores could spend in its wall-clock time (a busy machine makes
// the wall-clock time longer, never the CPU time).
func TestReportMeasuresCPU(t *testing.T) {
	var sink uint64
	r := testing.Benchmark(func(b *testing.B) {
		cpubench.Report(b, func() {
			for i := 0; i < b.N; i++ {
				for j := range 1000 {
					sink += uint64(i ^ j)
				}
			}
		})
	})
	_ = sink
	cpu, ok := r.Extra["cpu-ns/op"]
	if !ok {
		t.Fatalf("no cpu-ns/op metric: %v", r.Extra)
	}
	if wall := float64(r.NsPerOp()); cpu <= 0 || cpu > float64(runtime.NumCPU())*wall {
		t.Fatalf("cpu-ns/op %.0f, wall ns/op %.0f", cpu, wall)
	}
}
