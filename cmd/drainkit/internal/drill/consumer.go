package drill

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Consumer is one client of the service: its own keep-alive connection pool
// (an http.Transport), its own view of the instances, and round-robin load
// balancing over that view.
type Consumer struct {
	ID     int
	Source Source
	client *http.Client
	rr     atomic.Uint64
}

// NewConsumer returns a consumer with its own keep-alive transport.
func NewConsumer(id int, src Source) *Consumer {
	tr := &http.Transport{
		Proxy:               nil, // loopback only, never through a proxy
		DialContext:         (&net.Dialer{Timeout: time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &Consumer{ID: id, Source: src, client: &http.Client{Transport: tr}}
}

// Peeker is a Source that can tell what its next Endpoints call will return
// without side effects (a cache would otherwise refresh).
type Peeker interface {
	Peek() []Endpoint
}

// View returns the instances the consumer's next request will choose from.
func (c *Consumer) View() []Endpoint {
	if p, ok := c.Source.(Peeker); ok {
		return p.Peek()
	}
	return c.Source.Endpoints()
}

// Close closes the consumer's idle connections.
func (c *Consumer) Close() { c.client.CloseIdleConnections() }

// Load sends requests at a fixed total rate, open loop: request i is due at
// start + i/Rate whatever happened to earlier ones (a slow or failed request
// never delays the next), and goes to consumer i mod len(Consumers). Each
// request is GET Path with Timeout.
type Load struct {
	Rate      float64
	Consumers []*Consumer
	Path      string
	Timeout   time.Duration
	Recorder  *Recorder

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
		} else if ctx.Err() != nil {
			return
		}
		c := l.Consumers[i%int64(len(l.Consumers))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.send(c, due)
		}()
	}
}

// Pacing reports how well the load kept its schedule: the largest delay of a
// send behind its due time, and how many sends were more than 20 ms late.
func (l *Load) Pacing() (maxLag time.Duration, late int64) {
	return time.Duration(l.maxLag.Load()), l.late.Load()
}

func (l *Load) send(c *Consumer, due time.Time) {
	sent := time.Now()
	lag := sent.Sub(due)
	for {
		cur := l.maxLag.Load()
		if int64(lag) <= cur || l.maxLag.CompareAndSwap(cur, int64(lag)) {
			break
		}
	}
	if lag > lateLag {
		l.late.Add(1)
	}
	rec := Record{Start: l.Recorder.Offset(due), Sent: l.Recorder.Offset(sent), Consumer: c.ID}
	eps := c.Source.Endpoints()
	if len(eps) == 0 {
		rec.Outcome = NoEndpoint
		rec.Err = "the consumer's view of the service is empty"
		rec.End = rec.Sent
		l.Recorder.Add(rec)
		return
	}
	ep := eps[c.rr.Add(1)%uint64(len(eps))]
	rec.Replica = ep.Replica
	status, err := c.get(ep.Addr, l.Path, l.Timeout)
	rec.End = l.Recorder.Offset(time.Now())
	rec.Outcome = Classify(status, err)
	if err != nil {
		rec.Err = err.Error()
	} else if rec.Outcome.Failed() {
		rec.Err = http.StatusText(status)
	}
	l.Recorder.Add(rec)
}

// get does one GET and reads the body to the end, so that the connection
// goes back to the pool and an error while reading counts.
func (c *Consumer) get(addr, path string, timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return resp.StatusCode, err
	}
	return resp.StatusCode, nil
}
