package probes_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/probes"
)

func TestPostDrainAnswers202AndDrains(t *testing.T) {
	hs := newHarness(t, probes.Options{}, lifecycle.Options{})
	hs.run(t)
	code, _, body := hs.do(t, "POST", "/drain?reason=rollout", nil)
	if code != http.StatusAccepted {
		t.Fatalf("POST /drain = %d %q, want 202", code, body)
	}
	if st := hs.lc.State(); st != lifecycle.Draining {
		t.Fatalf("state %s after 202, want DRAINING", st)
	}
	if got := hs.lc.Status().Reason; got != "POST /drain from 127.0.0.1: rollout" {
		t.Errorf("reason %q", got)
	}
	// A second call joins the running drain.
	if code := hs.code(t, "POST", "/drain"); code != http.StatusAccepted {
		t.Errorf("second POST /drain = %d, want 202", code)
	}
}

func TestPostDrainWaitPropagation(t *testing.T) {
	const window = 400 * time.Millisecond
	tm := testTimings()
	tm.PropagationMin, tm.PropagationMax = window, window
	hs := newHarness(t, probes.Options{}, lifecycle.Options{Timings: tm})
	hs.run(t)

	if code, _, body := hs.do(t, "POST", "/drain?wait=forever", nil); code != http.StatusBadRequest || !strings.Contains(body, "allowed: propagation") {
		t.Errorf("POST /drain?wait=forever = %d %q, want 400 naming the allowed value", code, body)
	}
	if st := hs.lc.State(); st != lifecycle.Ready {
		t.Fatalf("a rejected request changed the state to %s", st)
	}

	start := time.Now()
	code, _, body := hs.do(t, "POST", "/drain?wait=propagation", nil)
	took := time.Since(start)
	if code != http.StatusOK {
		t.Fatalf("POST /drain?wait=propagation = %d %q, want 200", code, body)
	}
	if took < window-20*time.Millisecond || took > window+2*time.Second {
		t.Errorf("answered after %s, want about %s", took, window)
	}
	select { // the step is recorded right after the window's end wakes the waiter
	case <-hs.window.ended:
	case <-time.After(time.Second):
		t.Error("answered 200 but the window did not end")
	}
}

func TestPostDrainWaitGivesUpWithTheCaller(t *testing.T) {
	tm := testTimings()
	tm.PropagationMin, tm.PropagationMax = time.Second, time.Second
	hs := newHarness(t, probes.Options{}, lifecycle.Options{Timings: tm})
	hs.run(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", hs.srv.URL+"/drain?wait=propagation", nil)
	_, err := hs.srv.Client().Do(req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the caller's deadline", err)
	}
	if st := hs.lc.State(); st != lifecycle.Draining {
		t.Errorf("state %s, want DRAINING (the drain continues without the caller)", st)
	}
	// Let the cleanup's drain finish quickly: nothing else shortens the window.
	hs.gate()
	hs.stop(t)
}

func TestEjectRestore(t *testing.T) {
	hs := newHarness(t, probes.Options{}, lifecycle.Options{})

	code, _, body := hs.do(t, "POST", "/eject", nil)
	if code != http.StatusConflict || !strings.Contains(body, "STARTING -> EJECTED") {
		t.Errorf("eject in STARTING = %d %q, want 409 naming both states", code, body)
	}

	hs.run(t)
	if code, _, body := hs.do(t, "POST", "/eject", nil); code != http.StatusOK || body != "state: EJECTED\n" {
		t.Fatalf("POST /eject = %d %q", code, body)
	}
	if c := hs.code(t, "GET", "/readyz"); c != bad {
		t.Errorf("readyz after eject = %d, want 503", c)
	}
	if c := hs.code(t, "GET", "/livez"); c != ok {
		t.Errorf("livez after eject = %d, want 200", c)
	}
	if code, _, body := hs.do(t, "POST", "/restore", nil); code != http.StatusOK || body != "state: READY\n" {
		t.Fatalf("POST /restore = %d %q", code, body)
	}
	if c := hs.code(t, "GET", "/readyz"); c != ok {
		t.Errorf("readyz after restore = %d, want 200", c)
	}

	// DRAINING -> READY is illegal: 409 with the error, state unchanged.
	if err := hs.lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	code, _, body = hs.do(t, "POST", "/restore", nil)
	if code != http.StatusConflict || !strings.Contains(body, "illegal transition DRAINING -> READY") {
		t.Errorf("restore while draining = %d %q, want 409 naming DRAINING -> READY", code, body)
	}
	if code, _, _ := hs.do(t, "POST", "/eject", nil); code != http.StatusConflict {
		t.Errorf("eject while draining = %d, want 409", code)
	}
	if st := hs.lc.State(); st != lifecycle.Draining {
		t.Errorf("state %s, want DRAINING", st)
	}
}

func TestRestoreRefusesCheckEjection(t *testing.T) {
	hs := newHarness(t, probes.Options{}, lifecycle.Options{Checks: budget.CheckOptions{
		Interval: 10 * time.Millisecond, Timeout: 10 * time.Millisecond, FailureThreshold: 1, SuccessThreshold: 1000,
	}})
	hs.lc.AddCheck("db", func(context.Context) error { return errors.New("down") })
	hs.run(t)
	waitState(t, hs.lc, lifecycle.Ejected)
	code, _, body := hs.do(t, "POST", "/restore", nil)
	if code != http.StatusConflict || !strings.Contains(body, "ejected by readiness checks") {
		t.Errorf("restore of a check ejection = %d %q, want 409", code, body)
	}
	if st := hs.lc.State(); st != lifecycle.Ejected {
		t.Errorf("state %s, want EJECTED", st)
	}
}

func TestStateJSON(t *testing.T) {
	const token = "s3cret-admin-token-do-not-leak"
	hs := newHarness(t, probes.Options{Token: token}, lifecycle.Options{})
	hs.run(t)

	code, hdr, body := hs.do(t, "GET", "/state", nil)
	if code != http.StatusOK || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /state = %d %s", code, hdr.Get("Content-Type"))
	}
	var st struct {
		State    string         `json:"state"`
		Reason   string         `json:"reason"`
		InFlight map[string]int `json:"in_flight"`
		Timeline *struct {
			Steps []struct{ Name string } `json:"steps"`
		} `json:"timeline"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if st.State != "READY" || st.Timeline != nil || st.InFlight["requests"] != 1 {
		t.Errorf("state %+v from %s", st, body)
	}

	if c, _, _ := hs.do(t, "POST", "/drain", map[string]string{"Authorization": "Bearer " + token}); c != http.StatusAccepted {
		t.Fatalf("POST /drain with token = %d", c)
	}
	<-hs.window.ended
	_, _, body = hs.do(t, "GET", "/state", nil)
	if strings.Contains(body, token) {
		t.Fatalf("GET /state shows the token: %s", body)
	}
	st.Timeline = nil
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	if st.State != "DRAINING" || st.Timeline == nil || len(st.Timeline.Steps) == 0 || st.Timeline.Steps[0].Name != lifecycle.StepNotReady {
		t.Errorf("draining state %+v from %s", st, body)
	}
	if code := hs.code(t, "HEAD", "/state"); code != http.StatusOK {
		t.Errorf("HEAD /state = %d", code)
	}
}

// Subscribers that never read do not block transitions made over HTTP.
func TestActionsNotBlockedByIdleSubscribers(t *testing.T) {
	hs := newHarness(t, probes.Options{}, lifecycle.Options{})
	for range 3 {
		_, unsubscribe := hs.lc.Subscribe() // never read
		defer unsubscribe()
	}
	hs.run(t)
	for _, step := range []struct {
		path string
		code int
		want lifecycle.State
	}{
		{"/eject", http.StatusOK, lifecycle.Ejected},
		{"/restore", http.StatusOK, lifecycle.Ready},
		{"/eject", http.StatusOK, lifecycle.Ejected},
		{"/restore", http.StatusOK, lifecycle.Ready},
		{"/drain", http.StatusAccepted, lifecycle.Draining},
	} {
		start := time.Now()
		if code := hs.code(t, "POST", step.path); code != step.code {
			t.Fatalf("POST %s = %d, want %d", step.path, code, step.code)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("POST %s took %s", step.path, took)
		}
		if st := hs.lc.State(); st != step.want {
			t.Fatalf("after POST %s: %s, want %s", step.path, st, step.want)
		}
	}
}
