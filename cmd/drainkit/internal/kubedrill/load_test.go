package kubedrill

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/kubedrill/kubeload"
	"github.com/drainkit/drainkit/cmd/drainkit/internal/serve"
)

// The load program paces its requests, counts the answers by the pod
// that says it answered, records each failure (a 5xx too) and prints its
// summary once stopped, after what was in flight.
func TestRunLoad(t *testing.T) {
	var n atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const total = 20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		if i >= total {
			cancel()
		}
		if i%5 == 0 {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set(serve.ServedByHeader, "10.200.1.7")
	}))
	defer srv.Close()
	var out bytes.Buffer
	err := kubeload.Run(ctx, kubeload.Options{Via: LoadService, Target: srv.URL + "/", Rate: 200, RequestTimeout: 5 * time.Second}, Senders, &out)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&out)
	var lines []kubeload.Line
	for sc.Scan() {
		l, ok := loadLogLine(sc.Text())
		if !ok {
			t.Fatalf("not a load line: %q", sc.Text())
		}
		lines = append(lines, l)
	}
	if len(lines) != 2 || lines[0].Kind != "started" || lines[1].Kind != "summary" {
		t.Fatalf("lines %+v, want started and summary", lines)
	}
	s := lines[1].Summary
	if s.Sent < total || s.Sent != s.OK+s.Failed || int64(s.Sent) != n.Load() {
		t.Fatalf("sent %d, ok %d, failed %d; the server saw %d", s.Sent, s.OK, s.Failed, n.Load())
	}
	if s.ByPod["10.200.1.7"] == nil || s.ByPod["10.200.1.7"].N != s.OK || len(s.Failures) != s.Failed || s.Failures[0].Error == "" {
		t.Fatalf("summary %+v", s)
	}
}

// The drainkit command's load program refuses the EndpointSlice kind (it
// has no Kubernetes client) and says which image sends it.
func TestRunLoadRefusesKindsItCannotSend(t *testing.T) {
	for _, via := range []string{"pigeon", LoadEndpointSlices} {
		err := kubeload.Run(context.Background(), kubeload.Options{Via: via, Target: "http://x/", Rate: 1, RequestTimeout: time.Second}, Senders, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "kubeslices") {
			t.Errorf("--via %s: %v, want an error naming the kubeslices image", via, err)
		}
	}
}
