package consumer_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/registry"
)

// The Transport names its consumer on every request (issue 32), so that a
// provider's propagation window tells apart consumers behind one IP: the
// program's name by default, Options.Name when set, none with NoName; a
// request that names its consumer itself keeps its own; the caller's
// header is never modified.
func TestTransportNamesItsConsumer(t *testing.T) {
	var mu sync.Mutex
	var got []string
	b := newBackend(t, "b1", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, strings.Join(r.Header.Values(registry.ConsumerHeader), ","))
		mu.Unlock()
	})
	last := func() string {
		mu.Lock()
		defer mu.Unlock()
		return got[len(got)-1]
	}
	send := func(tr http.RoundTripper, h http.Header) {
		t.Helper()
		req, err := http.NewRequest("GET", "http://orders/x", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = h
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if h != nil && len(h[registry.ConsumerHeader]) > 1 {
			t.Fatalf("the caller's header was modified: %v", h)
		}
	}
	for _, c := range []struct {
		name, want string
	}{
		{"", filepath.Base(os.Args[0])},
		{"billing", "billing"},
		{consumer.NoName, ""},
	} {
		f := newFeed()
		f.push(1, b)
		_, tr, _ := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{Name: c.name})
		send(tr, http.Header{})
		if g := last(); g != c.want {
			t.Errorf("Name %q, no header: sent %q, want %q", c.name, g, c.want)
		}
		own := http.Header{"Accept": {"text/plain"}}
		send(tr, own)
		if g := last(); g != c.want {
			t.Errorf("Name %q, a header of its own: sent %q, want %q", c.name, g, c.want)
		}
		if _, ok := own[registry.ConsumerHeader]; ok {
			t.Errorf("Name %q: the request's own header was modified: %v", c.name, own)
		}
		send(tr, http.Header{registry.ConsumerHeader: {"set-by-caller"}})
		if g := last(); g != "set-by-caller" {
			t.Errorf("Name %q, the request names its consumer: sent %q, want set-by-caller", c.name, g)
		}
	}
}

func TestTransportRejectsBadName(t *testing.T) {
	f := newFeed()
	w, err := consumer.NewWatcher(consumer.WatcherOptions{Source: f, Service: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, name := range []string{"two words", "tab\there", strings.Repeat("x", 129), "naïve"} {
		if tr, err := consumer.NewTransport(w, "", consumer.Options{Name: name}); err == nil {
			tr.Close()
			t.Errorf("Name %q: no error", name)
		} else if !strings.Contains(err.Error(), "Options.Name") {
			t.Errorf("Name %q: error %q does not name Options.Name", name, err)
		}
	}
}
