// Package consumer is the client half of drainkit: an HTTP consumer that
// loses no request while the instances of the service it calls restart,
// drain or die.
//
// A Watcher keeps the service's candidate view, fed by a registry.Source
// (registry/consul's watch, a Static list, or a registry.SourceFunc), and
// treats it as evidence with an epoch, a revision, an age and a source: it
// never lets an older view replace a newer one (a registry whose revisions
// start again says so with a new epoch), keeps the last good view when the
// source fails (reporting its staleness, and Degraded past MaxStaleness),
// holds a sudden empty list for EmptyHold, and restarts a source whose Watch
// returned with jittered exponential backoff.
//
// A Transport is an http.RoundTripper over a Watcher: requests name the
// service as host (http://orders/...), and each goes to one instance, round
// robin or least request, with slow start for instances that became READY
// recently. A request that failed before any byte was written goes to
// another instance at once, whatever its method; an idempotent one that
// failed after being written is retried if the policy allows; all retries
// come out of a retry budget. Instances that fail at connect level are
// ejected locally with growing ejection times and a half-open probe, never
// more than MaxEjectionPercent at once (beyond that: panic mode). An answer
// naming another service (registry.IdentityHeader) is never returned: its
// address is ejected at once, and the request sent again elsewhere only if
// it is idempotent (the other service may have run it). With Zones, the
// local zone is preferred.
//
//	w, err := consumer.NewWatcher(consumer.WatcherOptions{Service: "orders", Source: src})
//	...
//	defer w.Close()
//	tr, err := consumer.NewTransport(w, "", consumer.Options{})
//	...
//	defer tr.Close()
//	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
//	resp, err := client.Get("http://orders/v1/orders/42")
//
// gRPC clients use package consumer/grpcresolver, which feeds grpc-go's own
// round_robin from a Watcher (grpc-go's outlier detection is the opt-in
// import consumer/grpcresolver/outlierdetection).
//
// Out of scope: active health checking (the registry's checks and passive
// ejection cover it), retries on HTTP status codes (a 503 is an answer),
// and writing anything to the registry. This package imports no gRPC,
// Consul or etcd code, and of OpenTelemetry only the API (Options'
// MeterProvider and TracerProvider; the program brings the SDK).
package consumer
