package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/kubedrill/kubeload"
	"github.com/drainkit/drainkit/consumer"
	k8s "github.com/drainkit/drainkit/registry/kubernetes"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// firstViewTimeout bounds the wait for the EndpointSlices' first list
// before the load starts.
const firstViewTimeout = 30 * time.Second

// slicesSender is the endpointslices load kind: a consumer.Transport over
// a consumer.Watcher fed by the Service's EndpointSlices, with the
// consumer's defaults (round robin, failover of unwritten requests,
// retries of idempotent ones within the budget, outlier ejection), keep-
// alive connections to the pod IPs.
type slicesSender struct {
	w       *consumer.Watcher
	tr      *consumer.Transport
	client  *http.Client
	service string
}

// newSlicesSender reads --target as NAMESPACE/SERVICE and the pod's
// in-cluster credentials (its ServiceAccount's token, which needs get,
// list and watch on endpointslices), and waits for the first view.
func newSlicesSender(o kubeload.Options) (kubeload.Sender, error) {
	namespace, service, ok := strings.Cut(o.Target, "/")
	if !ok || namespace == "" || service == "" {
		return nil, fmt.Errorf("kube-load: --target %q: want NAMESPACE/SERVICE with --via %s", o.Target, kubeload.EndpointSlices)
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("kube-load: --via %s runs in a pod (in-cluster config): %w", kubeload.EndpointSlices, err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	// stderr: the drill reads only the JSON lines of the pod's log; the
	// consumer's ejections and the source's errors are for whoever reads
	// the rest.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	w, err := consumer.NewWatcher(consumer.WatcherOptions{Service: service, Logger: logger,
		Source: k8s.NewSource(client, namespace, service, k8s.WatchOptions{Logger: logger})})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), firstViewTimeout)
	defer cancel()
	if err := w.Wait(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("kube-load: the EndpointSlices of %s/%s: no view within %s: %w", namespace, service, firstViewTimeout, err)
	}
	tr, err := consumer.NewTransport(w, service, consumer.Options{Logger: logger, Name: "drill-load"})
	if err != nil {
		w.Close()
		return nil, err
	}
	return &slicesSender{w: w, tr: tr, client: &http.Client{Transport: tr, Timeout: o.RequestTimeout}, service: service}, nil
}

// Send sends one GET through the consumer; the pod that answered (or that
// the last try went to) is the address the consumer dialled.
func (s *slicesSender) Send(ctx context.Context) (string, error) {
	var out consumer.Outcome
	req, err := http.NewRequestWithContext(consumer.WithOutcome(ctx, &out), http.MethodGet, "http://"+s.service+"/", nil)
	if err != nil {
		return "", err
	}
	resp, err := s.client.Do(req)
	by, _, _ := net.SplitHostPort(out.Addr)
	if err != nil {
		if errors.Is(err, consumer.ErrNoInstance) {
			err = fmt.Errorf("no instance in the view: %w", err)
		}
		return by, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode >= 500 {
		return by, fmt.Errorf("HTTP %s", resp.Status)
	}
	return by, err
}

// Close stops the Transport and the watch.
func (s *slicesSender) Close() {
	s.tr.Close()
	s.w.Close()
}
