package serve

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Every answer of the example service names the address its connection
// was accepted on: behind a Service that is the pod's IP, which the
// Kubernetes drill reads for the last request each pod served.
func TestServedByHeader(t *testing.T) {
	srv := httptest.NewServer(serviceHandler(Options{}, nil))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get(ServedByHeader); got != "127.0.0.1" {
		t.Fatalf("%s = %q, want 127.0.0.1 (the listener's IP)", ServedByHeader, got)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET / = %s", resp.Status)
	}
}
