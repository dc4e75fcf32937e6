package drill

import (
	"bytes"
	"cmp"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// naiveClient is a consumer as most are written (ConsumerNaive): its own
// keep-alive connection pool (an http.Transport), the discovery's list as it
// is (or as its cache holds it), round robin over it, no retry of its own
// and no ejection.
type naiveClient struct {
	src    Source
	client *http.Client
	rr     atomic.Uint64
	header http.Header // sent with every request (ConsumerCached's name); nil: none
}

// newNaiveClient implements NewClientFunc for ConsumerNaive.
func newNaiveClient(c ClientConfig) (Client, error) {
	return newNaive(c.Endpoints), nil
}

// newNaive returns a naive consumer of src with its own keep-alive
// transport, dialling through the drill's counting dialer.
func newNaive(src Source) *naiveClient {
	tr := &http.Transport{
		Proxy:               nil, // loopback only, never through a proxy
		DialContext:         drillDialer,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &naiveClient{src: src, client: &http.Client{Transport: tr}}
}

// drillDialer is ClientConfig.Dial: 1 s connect timeout, TCP keep-alive,
// connections that count what was written (writeTracker).
var drillDialer = countingDialer(&net.Dialer{Timeout: time.Second, KeepAlive: 30 * time.Second})

// Peeker is a Source that can tell what its next Endpoints call will return
// without side effects (a cache would otherwise refresh).
type Peeker interface {
	Peek() []Endpoint
}

// peekEndpoints returns the list src's next Endpoints call will return,
// through Peek when src is a Peeker.
func peekEndpoints(src Source) []Endpoint {
	if p, ok := src.(Peeker); ok {
		return p.Peek()
	}
	return src.Endpoints()
}

// Listed implements Client.
func (c *naiveClient) Listed() []string {
	eps := peekEndpoints(c.src)
	out := make([]string, len(eps))
	for i, ep := range eps {
		out[i] = ep.Addr
	}
	return out
}

// Stats implements Client: a naive consumer ejects nothing.
func (c *naiveClient) Stats() ClientStats { return ClientStats{} }

// Close implements Client: it closes the idle connections.
func (c *naiveClient) Close() { c.client.CloseIdleConnections() }

// Do implements Client: one try to the next instance in round robin.
func (c *naiveClient) Do(ctx context.Context, r Request) Attempt {
	eps := c.src.Endpoints()
	if len(eps) == 0 {
		return Attempt{Err: ErrNoEndpoint}
	}
	ep := eps[c.rr.Add(1)%uint64(len(eps))]
	status, err := sendWith(ctx, c.client, "http://"+ep.Addr, r, c.header)
	return Attempt{Addr: ep.Addr, Status: status, Err: err}
}

// send does one request to base+r.Path and reads the body to the end, so
// that the connection goes back to the pool and an error while reading
// counts.
func send(ctx context.Context, client *http.Client, base string, r Request) (int, error) {
	return sendWith(ctx, client, base, r, nil)
}

// sendWith is send with the request header header (read only: shared by
// concurrent requests; nil for none).
func sendWith(ctx context.Context, client *http.Client, base string, r Request, header http.Header) (int, error) {
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, base+r.Path, body)
	if err != nil {
		return 0, err
	}
	if header != nil {
		req.Header = header
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return resp.StatusCode, err
	}
	return resp.StatusCode, nil
}

// Load sends requests at a fixed total rate, open loop: request i is due at
// start + i/Rate whatever happened to earlier ones (a slow or failed request
// never delays the next), and goes to client i mod len(Clients) (consumer
// number i mod len + 1). Each is Request, bounded by Timeout.
type Load struct {
	Rate     float64
	Clients  []Client
	Request  Request
	Timeout  time.Duration
	Recorder *Recorder
	// ReplicaOf maps an instance's host:port to the drill's replica ID (0
	// for unknown); nil maps everything to 0.
	ReplicaOf func(addr string) int

	maxLag atomic.Int64 // largest delay between due time and send, ns
	late   atomic.Int64 // requests sent more than lateLag after their due time
}

// lateLag is how far behind schedule a send may be before it counts as late
// in Load.Pacing.
const lateLag = 20 * time.Millisecond

// Run paces requests until ctx ends, then waits for the ones in flight.
func (l *Load) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	interval := time.Duration(float64(time.Second) / l.Rate)
	start := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for i := int64(0); ; i++ {
		due := start.Add(time.Duration(i) * interval)
		if wait := time.Until(due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		}
		// Also after the timer: when both were ready, select may have
		// picked the timer, and no request goes out after the end.
		if ctx.Err() != nil {
			return
		}
		n := i % int64(len(l.Clients))
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.send(int(n)+1, l.Clients[n], due)
		}()
	}
}

// Pacing reports how well the load kept its schedule: the largest delay of a
// send behind its due time, and how many sends were more than 20 ms late.
func (l *Load) Pacing() (maxLag time.Duration, late int64) {
	return time.Duration(l.maxLag.Load()), l.late.Load()
}

func (l *Load) notePacing(lag time.Duration) {
	for {
		cur := l.maxLag.Load()
		if int64(lag) <= cur || l.maxLag.CompareAndSwap(cur, int64(lag)) {
			break
		}
	}
	if lag > lateLag {
		l.late.Add(1)
	}
}

func (l *Load) send(consumer int, c Client, due time.Time) {
	sent := time.Now()
	l.notePacing(sent.Sub(due))
	ctx, cancel := context.WithTimeout(context.Background(), l.Timeout)
	var w writeTracker
	att := c.Do(w.trace(ctx), l.Request)
	cancel()
	rec := Record{
		Start: l.Recorder.Offset(due), Sent: l.Recorder.Offset(sent), End: l.Recorder.Offset(time.Now()),
		Consumer: consumer, Replica: l.replicaOf(att.Addr), Outcome: Classify(att.Status, att.Err),
		Retries: att.Retries, Unanswered: l.replicaOf(cmp.Or(w.unanswered(), att.Unanswered)), ViewAge: att.ViewAge,
	}
	if first := l.replicaOf(cmp.Or(w.firstTry(), att.FirstAddr)); first != rec.Replica {
		rec.FirstTry = first
	}
	if att.Err != nil {
		rec.Err = att.Err.Error()
	} else if rec.Outcome.Failed() {
		rec.Err = strconv.Itoa(att.Status) + " " + http.StatusText(att.Status) // "503 Service Unavailable"
	}
	l.Recorder.Add(rec)
}

func (l *Load) replicaOf(addr string) int {
	if addr == "" || l.ReplicaOf == nil {
		return 0
	}
	return l.ReplicaOf(addr)
}
