package lifecycle_test

import (
	"strings"
	"testing"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
)

func TestNewRejectsBadTimings(t *testing.T) {
	tm := budget.DefaultTimings()
	tm.PropagationMin = -1
	if _, err := lifecycle.New(lifecycle.Options{Timings: tm}); err == nil || !strings.Contains(err.Error(), "propagation.min") {
		t.Fatalf("lifecycle.New with a bad timing: %v", err)
	}
}

// TestTimelineLogKeysUnique: every member of the exit line's timeline group
// has its own key (a JSON object with a repeated key loses a value).
func TestTimelineLogKeysUnique(t *testing.T) {
	tl := lifecycle.Timeline{ForceClosed: 2}
	for _, name := range []string{lifecycle.StepNotReady, lifecycle.StepDeregistered, lifecycle.StepConfirmed, lifecycle.StepWindowEnded,
		lifecycle.StepListenersClosed, lifecycle.StepIdle, lifecycle.StepForceClosed, lifecycle.StepStopHooksDone} {
		tl.Steps = append(tl.Steps, lifecycle.Step{Name: name, Err: "x"})
	}
	seen := map[string]bool{}
	for _, a := range tl.LogValue().Group() {
		if seen[a.Key] {
			t.Errorf("key %q twice in the timeline log group", a.Key)
		}
		seen[a.Key] = true
	}
}
