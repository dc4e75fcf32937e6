package middleware_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the CPU time (user and system) this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU runs f and reports the process's CPU time per operation as
// cpu-ns/op beside the wall-clock ns/op. On a shared, busy machine ns/op
// grows with the time the benchmark waits for a core; cpu-ns/op does not
// (it includes the runtime's own work, such as GC, which is small here).
func reportCPU(b *testing.B, f func()) {
	start := cpuTime(b)
	f()
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
}
