package consumer_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/registry"
)

// identified returns a backend that names itself as service/name in the
// identity header, as a provider built on drainkit does.
func identified(t *testing.T, service, name string) *backend {
	return newBackend(t, name, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(registry.IdentityHeader, service+"/"+name)
		w.Write([]byte(service))
	})
}

// An address of the view now served by another service: none of its
// answers is returned, it is ejected at its first answer, and the calls,
// POSTs included, are retried on the right service.
func TestWrongServiceNeverAnswers(t *testing.T) {
	orders, payments := identified(t, "orders", "o1"), identified(t, "payments", "p1")
	f := newFeed()
	f.push(1, orders, payments)
	_, tr, logs := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{
		Outlier: consumer.OutlierDetection{BaseEjectionTime: time.Minute}})
	for i := range 20 {
		method := "GET"
		if i%2 == 1 {
			method = "POST"
		}
		body, err := do(tr, method, "x")
		if err != nil || body != "orders" {
			t.Fatalf("%s %d: %q, %v; want orders' answer", method, i, body, err)
		}
	}
	s := tr.Status()
	if payments.hits.Load() != 1 || s.WrongService != 1 || s.Ejections != 1 || s.Ejected != 1 || s.Failures != 0 {
		t.Errorf("payments served %d, status %v: want 1 answer discarded, the address ejected at once, 0 failures", payments.hits.Load(), s)
	}
	if !strings.Contains(logs.String(), "instance ejected") {
		t.Error("the ejection was not logged")
	}
	// With the wrong service alone, the caller gets an error, never its answer.
	f.push(2, payments)
	eventually(t, 5*time.Second, "view of payments alone", func() bool { return tr.Status().Instances == 1 })
	req, _ := http.NewRequestWithContext(context.Background(), "GET", "http://orders/x", nil)
	resp, err := tr.RoundTrip(req)
	if !errors.Is(err, consumer.ErrWrongService) || resp != nil {
		t.Errorf("RoundTrip to payments alone: %v, %v; want ErrWrongService and no response", resp, err)
	}
}
