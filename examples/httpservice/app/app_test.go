package app

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func get(t *testing.T, ctx context.Context, url string) (int, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func TestRoutes(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	defer http.DefaultClient.CloseIdleConnections()
	ctx := context.Background()

	if code, body, err := get(t, ctx, srv.URL+"/"); err != nil || code != 200 || !strings.Contains(body, "hello") {
		t.Errorf("GET / = %d %q %v", code, body, err)
	}
	if code, _, _ := get(t, ctx, srv.URL+"/nope"); code != 404 {
		t.Errorf("GET /nope = %d, want 404", code)
	}
	for _, d := range []string{"banana", "-1s", "11m", "5"} {
		if code, body, _ := get(t, ctx, srv.URL+"/work?d="+d); code != 400 || !strings.Contains(body, "d: ") {
			t.Errorf("GET /work?d=%s = %d %q, want 400 naming d", d, code, body)
		}
	}

	start := time.Now()
	code, body, err := get(t, ctx, srv.URL+"/work?d=200ms")
	if took := time.Since(start); err != nil || code != 200 || body != "worked 200ms\n" || took < 200*time.Millisecond {
		t.Errorf("GET /work?d=200ms = %d %q %v after %s", code, body, err, took)
	}
}

func TestWorkEndsWithTheRequestContext(t *testing.T) {
	ended := make(chan time.Duration, 1)
	h := Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		h.ServeHTTP(w, r)
		ended <- time.Since(start)
	}))
	defer srv.Close()
	defer http.DefaultClient.CloseIdleConnections()

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, _, err := get(t, ctx, srv.URL+"/work?d=1m"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the client's deadline", err)
	}
	select {
	case took := <-ended:
		if took > 10*time.Second {
			t.Errorf("handler ran %s after the client left", took)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler kept working after the client went away")
	}
}
