package serve

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// The sleep10 baseline's pod is not ready once terminating: its /readyz
// answers 200 until notReady is set, 503 after; /livez stays 200.
func TestReadyUntil(t *testing.T) {
	var notReady atomic.Bool
	h := readyUntil(&notReady)
	code := func(path string) int {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		return w.Code
	}
	if c := code("/readyz"); c != http.StatusOK {
		t.Fatalf("/readyz before: %d, want 200", c)
	}
	notReady.Store(true)
	if c := code("/readyz"); c != http.StatusServiceUnavailable {
		t.Errorf("/readyz terminating: %d, want 503", c)
	}
	if c := code("/livez"); c != http.StatusOK {
		t.Errorf("/livez terminating: %d, want 200", c)
	}
}
