package drill

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// sseServer serves GET /events as the example does, over HTTP/1.1 and
// h2c: n events, then, by the query's end parameter, the drain event
// ("drain"), a silent end ("eof") or nothing more (a stall).
func sseServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for i := range 2 {
			fmt.Fprintf(w, "id: %d\ndata: %d\n\n", i, i)
		}
		_ = rc.Flush()
		switch r.URL.Query().Get("end") {
		case "drain":
			fmt.Fprint(w, "retry: 1500\nevent: drain\ndata: draining\n\n")
		case "stall":
			<-r.Context().Done()
		}
	}))
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv.Config.Protocols = p
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// fixedOpener opens url with client.
type fixedOpener struct {
	client *http.Client
	url    string
}

func (f fixedOpener) open(ctx context.Context, _ string) (*http.Response, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url, nil)
	if err != nil {
		return nil, "", err
	}
	resp, err := f.client.Do(req)
	return resp, strings.TrimPrefix(f.url, "http://"), err
}
func (fixedOpener) next(streamEnd) time.Duration { return 0 }
func (f fixedOpener) close()                     { f.client.CloseIdleConnections() }

// TestReadStream: a stream ended by the drain event is no error and
// carries the event's retry delay; one that ends silently is an EOF
// failure; one that stalls for streamStall is a timeout; the HTTP/2 kind
// refuses an HTTP/1.1 answer.
func TestReadStream(t *testing.T) {
	srv := sseServer(t)
	h2 := new(http.Protocols)
	h2.SetUnencryptedHTTP2(true)
	for _, tc := range []struct {
		end     string
		h2      bool
		drained bool
		outcome Outcome
	}{
		{"drain", false, true, OK},
		{"drain", true, true, OK},
		{"eof", false, false, EOF},
		{"eof", true, false, EOF},
		{"stall", false, false, Timeout},
	} {
		tr := &http.Transport{}
		if tc.h2 {
			tr.Protocols = h2
		}
		o := fixedOpener{client: &http.Client{Transport: tr}, url: srv.URL + "/events?end=" + tc.end}
		var opened atomic.Int32
		e := readStream(context.Background(), o, "", tc.h2, func() { opened.Add(1) })
		o.close()
		if e.drained != tc.drained || Classify(e.status, e.err) != tc.outcome || e.events != 2 || opened.Load() != 1 {
			t.Errorf("%s (h2 %v): drained %v, %d events, opened %d, outcome %s (%v); want drained %v, 2 events, opened once, %s",
				tc.end, tc.h2, e.drained, e.events, opened.Load(), Classify(e.status, e.err), e.err, tc.drained, tc.outcome)
		}
		if tc.drained && e.retry != 1500*time.Millisecond {
			t.Errorf("%s: retry %s, want the event's 1.5s", tc.end, e.retry)
		}
	}
	// An HTTP/1.1 answer to the HTTP/2 kind is an error.
	o := fixedOpener{client: &http.Client{Transport: &http.Transport{}}, url: srv.URL + "/events?end=drain"}
	defer o.close()
	if e := readStream(context.Background(), o, "", true, func() {}); e.err == nil || !strings.Contains(e.err.Error(), "want HTTP/2") {
		t.Errorf("HTTP/1.1 answer to an HTTP/2 stream: %v", e.err)
	}
}
