package kubedrill

import (
	"testing"
	"time"
)

func TestPodLogLine(t *testing.T) {
	pod, mark, at, ok := podLogLine(`[pod/drill-drainkit-6f9-x2/service] {"time":"2026-12-05T08:00:01.25Z","level":"INFO","msg":"serve: SIGTERM received","strategy":"drainkit"}`)
	if !ok || mark != logSIGTERM || pod != "drill-drainkit-6f9-x2" || !at.Equal(time.Date(2026, 12, 5, 8, 0, 1, 250e6, time.UTC)) {
		t.Fatalf("podLogLine = %q, %d, %v, %v", pod, mark, at, ok)
	}
	if _, mark, _, ok := podLogLine(`[pod/p/service] {"time":"2026-12-05T08:00:01Z","msg":"drainkit: drain complete","exit_code":0}`); !ok || mark != logDone {
		t.Errorf("drain complete: mark %d, ok %v", mark, ok)
	}
	for _, line := range []string{
		`[pod/p/service] {"time":"2026-12-05T08:00:01Z","msg":"drainkit: drain step"}`,
		`[pod/p/service] not json`,
		`{"time":"2026-12-05T08:00:01Z","msg":"serve: SIGTERM received"}`,
	} {
		if _, _, _, ok := podLogLine(line); ok {
			t.Errorf("podLogLine(%q) matched", line)
		}
	}
}
