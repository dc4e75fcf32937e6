// Package kubeload is the load program of `drainkit drill --kubernetes`:
// what runs in a load pod, sending a fixed rate of requests until SIGTERM
// and printing its summary as JSON lines for the drill to read.
//
// It is a package of its own, importing no drainkit discovery or service
// code, so that two binaries can run it: the drainkit command (load kind
// "service", through kube-proxy) and the EndpointSlice load image
// (cmd/drainkit/internal/kubeslices, a module of its own with client-go:
// load kind "endpointslices", through drainkit's consumer), each passing
// the kinds it can send to NewCommand.
package kubeload

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// The load kinds' names (--via), shared by the drill and the binaries that
// send them.
const (
	// Service: HTTP through the Service's ClusterIP (the drainkit
	// command's kube-load).
	Service = "service"
	// EndpointSlices: HTTP to the pod IPs through drainkit's consumer fed
	// by the Service's EndpointSlices (cmd/drainkit/internal/kubeslices).
	EndpointSlices = "endpointslices"
)

// Options configure the load program.
type Options struct {
	// Via is the load kind: how the pod reaches the service.
	Via string
	// Target is what the kind sends to (the kind says what it reads: a
	// URL through the Service's ClusterIP, NAMESPACE/SERVICE for the
	// EndpointSlices).
	Target string
	// Rate is requests/s, paced (open loop: a slow answer does not delay
	// the next request).
	Rate float64
	// RequestTimeout bounds each request.
	RequestTimeout time.Duration
}

// A Sender is a load kind in the load pod: it sends one request per Send.
type Sender interface {
	// Send sends one request and returns the IP of the pod that answered
	// ("" if unknown) or why the request failed.
	Send(ctx context.Context) (servedBy string, err error)
	// Close releases what the sender holds (connections, watches).
	Close()
}

// NewSender makes a load kind's Sender from the program's options; an
// error names the bad option.
type NewSender func(o Options) (Sender, error)

// Line is one line the load program prints (JSON): "started" when the
// first request is due, "summary" when it stopped.
type Line struct {
	Kind    string   `json:"kind"`
	AtMS    int64    `json:"at_unix_ms"`
	Summary *Summary `json:"summary,omitempty"`
}

// Summary is what a load pod sent and what answered it. Times are Unix
// milliseconds of when a request was sent, on the node's clock (the drill
// reads them on the same machine's or compares them as offsets).
type Summary struct {
	Sent   int `json:"sent"`
	OK     int `json:"ok"`
	Failed int `json:"failed"`
	// MaxLagMS is how far behind its schedule the pacing fell at worst.
	MaxLagMS int64 `json:"max_lag_ms"`
	// ByPod counts the answered requests per pod IP that answered.
	ByPod map[string]*PodCount `json:"by_pod"`
	// Failures are the failed requests, at most maxFailures; Dropped
	// counts those beyond.
	Failures []Failure `json:"failures"`
	Dropped  int       `json:"failures_dropped"`
}

// PodCount is the answered requests of one pod.
type PodCount struct {
	N int `json:"n"`
	// FirstMS and LastMS are when the first and the last request it
	// answered were sent.
	FirstMS int64 `json:"first_sent_unix_ms"`
	LastMS  int64 `json:"last_sent_unix_ms"`
}

// Failure is one failed request.
type Failure struct {
	SentMS   int64  `json:"sent_unix_ms"`
	Error    string `json:"error"`
	ServedBy string `json:"served_by,omitempty"`
}

// maxFailures bounds Summary.Failures (a run without any drain losing
// every request would otherwise print megabytes).
const maxFailures = 20000

// Run sends o.Rate requests/s of kind o.Via (one of kinds) until ctx
// ends, then waits for the requests in flight and prints the summary. It
// prints a "started" line first, so that the drill knows the load runs.
func Run(ctx context.Context, o Options, kinds map[string]NewSender, out io.Writer) error {
	newSender, ok := kinds[o.Via]
	if !ok {
		return fmt.Errorf("kube-load: --via %q: this binary sends %s (the drainkit command's kube-load sends %s, cmd/drainkit/internal/kubeslices's %s)",
			o.Via, strings.Join(slices.Sorted(maps.Keys(kinds)), ", "), Service, EndpointSlices)
	}
	if o.Rate <= 0 || o.RequestTimeout <= 0 {
		return fmt.Errorf("kube-load: --rate and --request-timeout must be > 0")
	}
	s, err := newSender(o)
	if err != nil {
		return err
	}
	defer s.Close()
	enc := json.NewEncoder(out)
	start := time.Now()
	if err := enc.Encode(Line{Kind: "started", AtMS: start.UnixMilli()}); err != nil {
		return err
	}
	sum := &Summary{ByPod: map[string]*PodCount{}, Failures: []Failure{}}
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
			return enc.Encode(Line{Kind: "summary", AtMS: time.Now().UnixMilli(), Summary: sum})
		case <-timer.C:
		}
		sent := time.Now()
		lag := sent.Sub(due).Milliseconds()
		inflight.Go(func() {
			by, err := s.Send(reqCtx)
			mu.Lock()
			defer mu.Unlock()
			sum.record(sent, by, err)
			sum.MaxLagMS = max(sum.MaxLagMS, lag)
		})
	}
}

// record counts one request sent at sent.
func (s *Summary) record(sent time.Time, by string, err error) {
	s.Sent++
	ms := sent.UnixMilli()
	if err != nil {
		s.Failed++
		if len(s.Failures) < maxFailures {
			s.Failures = append(s.Failures, Failure{SentMS: ms, Error: err.Error(), ServedBy: by})
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

// NewCommand is the hidden `kube-load` command that `drill --kubernetes`
// runs in its load pods (the pod's args: kube-load --via KIND --target ...
// --rate N --request-timeout D): it sends until SIGTERM or SIGINT, then
// prints its summary. kinds are the load kinds this binary can send.
func NewCommand(kinds map[string]NewSender) *cobra.Command {
	o := Options{Rate: 200, RequestTimeout: 2 * time.Second}
	cmd := &cobra.Command{
		Use:    "kube-load",
		Short:  "the load pod of drill --kubernetes (used by drill)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return Run(ctx, o, kinds, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Via, "via", "", "load kind")
	f.StringVar(&o.Target, "target", "", "what the load kind sends to")
	f.Float64Var(&o.Rate, "rate", o.Rate, "requests/s")
	f.DurationVar(&o.RequestTimeout, "request-timeout", o.RequestTimeout, "timeout of each request")
	return cmd
}
