package drill

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/drainkit/drainkit/consumer"
)

// The drainkit consumer kind: package consumer over the drill's discovery.
func init() { RegisterConsumer(ConsumerDrainkit, newDrainkitClient) }

// drainkitClient is a consumer.Transport (with its consumer.Watcher) fed by
// the drill's views, dialling through the drill's counting dialer, with the
// package's defaults: round robin, failover of unwritten requests, retries
// of idempotent ones within a 20 % budget, outlier ejection (3 consecutive
// connect-level failures, at most 50 % ejected), a 10 s empty-list hold,
// and an OTel SDK of its own receiving the Transport's telemetry (see
// ConsumerTelemetry).
type drainkitClient struct {
	w       *consumer.Watcher
	tr      *consumer.Transport
	client  *http.Client
	service string
	sdk     *consumerSDK
}

// newDrainkitClient implements NewClientFunc for ConsumerDrainkit.
func newDrainkitClient(c ClientConfig) (Client, error) {
	return newDrainkitClientWith(c, consumer.WatcherOptions{})
}

// newDrainkitClientWith is newDrainkitClient with further watcher options
// (Source, Service and Logger are the drill's).
func newDrainkitClientWith(c ClientConfig, wo consumer.WatcherOptions) (*drainkitClient, error) {
	logger := slog.New(slog.DiscardHandler) // the drill reports the outcomes itself
	wo.Source, wo.Service, wo.Logger = c.Views, c.Service, logger
	w, err := consumer.NewWatcher(wo)
	if err != nil {
		return nil, err
	}
	base := &http.Transport{
		Proxy:               nil, // loopback only, never through a proxy
		DialContext:         c.Dial,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		// A try without a response header in time fails and may be
		// retried elsewhere: a hung instance counts towards ejection.
		ResponseHeaderTimeout: c.TryTimeout,
	}
	sdk := newConsumerSDK()
	tr, err := consumer.NewTransport(w, c.Service, consumer.Options{Base: base, Logger: logger, Zones: c.Zones,
		MeterProvider: sdk.mp, TracerProvider: sdk.tp, Name: "drainkit-" + strconv.Itoa(c.ID)})
	if err != nil {
		sdk.shutdown()
		w.Close()
		return nil, err
	}
	return &drainkitClient{w: w, tr: tr, client: &http.Client{Transport: tr}, service: c.Service, sdk: sdk}, nil
}

// Do implements Client: one request through the Transport, retries included.
func (d *drainkitClient) Do(ctx context.Context, r Request) Attempt {
	var out consumer.Outcome
	age := d.w.View().Age(time.Now())
	status, err := send(consumer.WithOutcome(ctx, &out), d.client, "http://"+d.service, r)
	if errors.Is(err, consumer.ErrNoInstance) || errors.Is(err, consumer.ErrZoneUnavailable) {
		err = fmt.Errorf("%w: %w", ErrNoEndpoint, err)
	}
	return Attempt{Addr: out.Addr, Status: status, Err: err, Retries: max(out.Attempts-1, 0), ViewAge: age}
}

// Listed implements Client: the candidates that are not ejected.
func (d *drainkitClient) Listed() []string {
	var out []string
	for _, in := range d.tr.Instances() {
		if !in.Ejected {
			out = append(out, in.Addr)
		}
	}
	return out
}

// ViewListed implements viewLister: the instances of the watcher's view,
// ejected or not, and the view's revision.
func (d *drainkitClient) ViewListed() ([]string, uint64) {
	v := d.w.View()
	out := make([]string, len(v.Instances))
	for i, in := range v.Instances {
		out[i] = in.HostPort()
	}
	return out, v.Revision
}

// Stats implements Client.
func (d *drainkitClient) Stats() ClientStats {
	st := d.tr.Status()
	return ClientStats{Ejections: int64(st.Ejections), BudgetDenied: int64(st.BudgetExhausted)}
}

// Telemetry implements telemetryReporter; read it before Close.
func (d *drainkitClient) Telemetry() ConsumerTelemetry { return d.sdk.collect() }

// Close implements Client.
func (d *drainkitClient) Close() {
	d.tr.Close()
	d.w.Close()
	d.sdk.shutdown()
}
