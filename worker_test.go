package drainkit_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/workdrain"
)

// WithWorker adds a participant with no listener: its work in flight shows
// in GET /state as in_flight.work, and the drain waits for it (exit 0).
func TestWithWorkerCountsWorkInState(t *testing.T) {
	taken, release := make(chan struct{}), make(chan struct{})
	w := workdrain.New(workdrain.AtDrainStart, func(ctx context.Context, w *workdrain.Worker) error {
		go func() {
			_ = w.Do(func(context.Context) error { close(taken); <-release; return nil })
		}()
		<-ctx.Done()
		return nil
	})
	a := started(t, drainkit.WithWorker("jobs", w))
	<-taken
	defer close(release) // before the cleanup's drain, which waits for the unit
	resp, err := http.Get("http://" + a["admin"].String() + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		InFlight struct {
			Work int64 `json:"work"`
		} `json:"in_flight"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.InFlight.Work != 1 {
		t.Fatalf("GET /state in_flight.work = %d, want 1", st.InFlight.Work)
	}
}
