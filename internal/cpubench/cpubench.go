// Package cpubench reports a benchmark's CPU time per operation beside its
// wall-clock time, for the benchmarks of several modules (grpcdrain,
// bench/middleware). On a shared, busy machine ns/op grows with the time the
// benchmark waits for a core; cpu-ns/op does not (it includes the runtime's
// own work, such as GC, which is small in these benchmarks). Unix only: it
// reads getrusage(2).
package cpubench

import (
	"syscall"
	"testing"
	"time"
)

// Used returns the CPU time (user and system) this process has used.
func Used(b testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Report runs f, the timed loop of b, and reports the process's CPU time
// per operation as the metric cpu-ns/op.
func Report(b *testing.B, f func()) {
	start := Used(b)
	f()
	b.ReportMetric(float64(Used(b)-start)/float64(b.N), "cpu-ns/op")
}
