package kubedrill

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/serve"
)

// LoadOptions configure the load program a load pod runs (`drainkit
// kube-load`).
type LoadOptions struct {
	// Via is the load kind (LoadKinds): how the pod reaches the service.
	Via string
	// Target is what the kind sends to: for "service", the Service's URL
	// (http://CLUSTER-IP:PORT/).
	Target string
	// Rate is requests/s, paced (open loop: a slow answer does not delay
	// the next request).
	Rate float64
	// RequestTimeout bounds each request.
	RequestTimeout time.Duration
}

// A sender sends one request and returns the IP of the pod that answered
// ("" if the answer does not say) or why the request failed.
type sender interface {
	send(ctx context.Context) (servedBy string, err error)
	close()
}

// LoadKind is one way a load pod reaches the service under drill.
type LoadKind struct {
	// Doc says what the kind is, for --help.
	Doc string
	// target is the load pod's --target for the Service name (in the
	// drill's namespace) whose ClusterIP is clusterIP.
	target func(service, clusterIP string) string
	// newSender makes the kind's sender in the load pod.
	newSender func(o LoadOptions) (sender, error)
}

// LoadKinds are the load kinds by name. A kind is what the load pod does
// per request; the drill gives every kind the same pods, rate and report,
// so a new kind (a consumer of the EndpointSlices) is one entry here.
var LoadKinds = map[string]LoadKind{
	LoadService: {
		Doc:       "HTTP through the Service's ClusterIP (kube-proxy's rules), a new connection per request, no retry",
		target:    func(_, clusterIP string) string { return "http://" + clusterIP + ":80/" },
		newSender: newServiceSender,
	},
}

// LoadService is the load kind that goes through the Service's ClusterIP.
const LoadService = "service"

// loadKindNames lists LoadKinds' names, sorted.
func loadKindNames() []string {
	var names []string
	for n := range LoadKinds {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// serviceSender is LoadService: a new TCP connection per request, so that
// each request is balanced by kube-proxy's rules as they are at that
// instant (a keep-alive connection would stay on its pod and hide when the
// rules changed), and no retry.
type serviceSender struct {
	client *http.Client
	url    string
}

func newServiceSender(o LoadOptions) (sender, error) {
	if !strings.HasPrefix(o.Target, "http://") {
		return nil, fmt.Errorf("kube-load: --target %q: want http://HOST:PORT/PATH", o.Target)
	}
	tr := &http.Transport{DisableKeepAlives: true}
	return &serviceSender{client: &http.Client{Transport: tr, Timeout: o.RequestTimeout}, url: o.Target}, nil
}

func (s *serviceSender) send(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return "", err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	by := resp.Header.Get(serve.ServedByHeader)
	if resp.StatusCode >= 500 {
		return by, fmt.Errorf("HTTP %s", resp.Status)
	}
	return by, err
}

func (s *serviceSender) close() { s.client.CloseIdleConnections() }

// LoadLine is one line the load program prints (JSON): "started" when the
// first request is due, "summary" when it stopped.
type LoadLine struct {
	Kind    string       `json:"kind"`
	AtMS    int64        `json:"at_unix_ms"`
	Summary *LoadSummary `json:"summary,omitempty"`
}

// LoadSummary is what a load pod sent and what answered it. Times are Unix
// milliseconds of when a request was sent, on the node's clock (the drill
// reads them on the same machine's or compares them as offsets).
type LoadSummary struct {
	Sent   int `json:"sent"`
	OK     int `json:"ok"`
	Failed int `json:"failed"`
	// MaxLagMS is how far behind its schedule the pacing fell at worst.
	MaxLagMS int64 `json:"max_lag_ms"`
	// ByPod counts the answered requests per pod IP that answered.
	ByPod map[string]*PodCount `json:"by_pod"`
	// Failures are the failed requests, at most maxFailures; Dropped
	// counts those beyond.
	Failures []LoadFailure `json:"failures"`
	Dropped  int           `json:"failures_dropped"`
}

// PodCount is the answered requests of one pod.
type PodCount struct {
	N int `json:"n"`
	// FirstMS and LastMS are when the first and the last request it
	// answered were sent.
	FirstMS int64 `json:"first_sent_unix_ms"`
	LastMS  int64 `json:"last_sent_unix_ms"`
}

// LoadFailure is one failed request.
type LoadFailure struct {
	SentMS   int64  `json:"sent_unix_ms"`
	Error    string `json:"error"`
	ServedBy string `json:"served_by,omitempty"`
}

// maxFailures bounds LoadSummary.Failures (a run without any drain losing
// every request would otherwise print megabytes).
const maxFailures = 20000

// RunLoad sends o.Rate requests/s of kind o.Via until ctx ends, then waits
// for the requests in flight and prints the summary. It prints a "started"
// line first, so that the drill knows the load runs.
func RunLoad(ctx context.Context, o LoadOptions, out io.Writer) error {
	kind, ok := LoadKinds[o.Via]
	if !ok {
		return fmt.Errorf("kube-load: --via %q: want one of %s", o.Via, strings.Join(loadKindNames(), ", "))
	}
	if o.Rate <= 0 || o.RequestTimeout <= 0 {
		return fmt.Errorf("kube-load: --rate and --request-timeout must be > 0")
	}
	s, err := kind.newSender(o)
	if err != nil {
		return err
	}
	defer s.close()
	enc := json.NewEncoder(out)
	start := time.Now()
	if err := enc.Encode(LoadLine{Kind: "started", AtMS: start.UnixMilli()}); err != nil {
		return err
	}
	sum := &LoadSummary{ByPod: map[string]*PodCount{}, Failures: []LoadFailure{}}
	var mu sync.Mutex
	var inflight sync.WaitGroup
	// The requests run to their own timeout after ctx ends: the drill
	// stops the load, it does not cut what was sent.
	reqCtx := context.WithoutCancel(ctx)
	every := time.Duration(float64(time.Second) / o.Rate)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for i := 0; ; i++ {
		due := start.Add(time.Duration(i) * every)
		timer.Reset(time.Until(due))
		select {
		case <-ctx.Done():
			inflight.Wait()
			return enc.Encode(LoadLine{Kind: "summary", AtMS: time.Now().UnixMilli(), Summary: sum})
		case <-timer.C:
		}
		sent := time.Now()
		lag := sent.Sub(due).Milliseconds()
		inflight.Go(func() {
			by, err := s.send(reqCtx)
			mu.Lock()
			defer mu.Unlock()
			sum.record(sent, by, err)
			sum.MaxLagMS = max(sum.MaxLagMS, lag)
		})
	}
}

// record counts one request sent at sent.
func (s *LoadSummary) record(sent time.Time, by string, err error) {
	s.Sent++
	ms := sent.UnixMilli()
	if err != nil {
		s.Failed++
		if len(s.Failures) < maxFailures {
			s.Failures = append(s.Failures, LoadFailure{SentMS: ms, Error: err.Error(), ServedBy: by})
		} else {
			s.Dropped++
		}
		return
	}
	s.OK++
	p := s.ByPod[by]
	if p == nil {
		p = &PodCount{FirstMS: ms, LastMS: ms}
		s.ByPod[by] = p
	}
	p.N++
	p.FirstMS = min(p.FirstMS, ms)
	p.LastMS = max(p.LastMS, ms)
}
