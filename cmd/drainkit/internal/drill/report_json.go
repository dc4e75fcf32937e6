package drill

import (
	"cmp"
	"encoding/json"
	"io"
	"time"
)

// SchemaVersion is the version of the `drainkit drill --json` shape
// (JSONReport). It grows when a key is renamed, removed or changes meaning;
// new keys do not change it. Version 2 put the unit into every duration
// key (_s, _ms) and added the consumer figures.
const SchemaVersion = 2

// ConfigReport is the drill's configuration as the JSON output shows it.
// Durations are in seconds (_s).
type ConfigReport struct {
	Scenarios         []string           `json:"scenarios"`
	Strategies        []string           `json:"strategies"`
	Exec              string             `json:"exec,omitempty"`
	Consumer          string             `json:"consumer"`
	Protocol          string             `json:"protocol"`
	Method            string             `json:"method"`
	Path              string             `json:"path"`
	BodyBytes         int                `json:"body_bytes"`
	Replicas          int                `json:"replicas"`
	Rate              float64            `json:"rate_per_second"`
	Consumers         int                `json:"consumers"`
	RequestTimeout    float64            `json:"request_timeout_s"`
	Discovery         string             `json:"discovery"`
	DiscoveryInterval float64            `json:"discovery_interval_s"`
	FailureThreshold  int                `json:"failure_threshold"`
	ConsumerCache     float64            `json:"consumer_cache_s"`
	Consul            string             `json:"consul,omitempty"`
	Etcd              string             `json:"etcd,omitempty"`
	Nacos             string             `json:"nacos,omitempty"`
	NacosPoll         float64            `json:"nacos_poll_s,omitempty"`
	OfflineWait       float64            `json:"offline_wait_s,omitempty"`
	Baseline          float64            `json:"baseline_s"`
	Tail              float64            `json:"tail_s"`
	StaleWait         float64            `json:"stale_wait_s"`
	PreStop           bool               `json:"prestop"`
	Sequential        bool               `json:"sequential,omitempty"`
	Timings           map[string]float64 `json:"timings_s"`
	TimingSources     map[string]string  `json:"timing_sources,omitempty"`
}

// discoveryName names how the consumers learn the instances.
func (c Config) discoveryName() string {
	if c.Consul != "" {
		return "consul watch"
	}
	if c.Etcd != "" {
		return "etcd watch"
	}
	if c.Nacos != "" {
		return "nacos"
	}
	return "readiness probes"
}

// timings returns the replicas' timings by configuration key.
func (c Config) timings() map[string]time.Duration {
	t := c.Timings
	return map[string]time.Duration{
		"warmup.timeout":    t.WarmupTimeout,
		"propagation.min":   t.PropagationMin,
		"propagation.quiet": t.PropagationQuiet,
		"propagation.max":   t.PropagationMax,
		"drain.timeout":     t.DrainTimeout,
		"stop.timeout":      t.StopTimeout,
		"grace_period":      t.GracePeriod,
	}
}

// Report builds the configuration report.
func (c Config) Report() ConfigReport {
	tm := map[string]float64{}
	for k, v := range c.timings() {
		tm[k] = v.Seconds()
	}
	var poll, wait float64
	if c.Nacos != "" {
		poll, wait = c.NacosPoll.Seconds(), c.OfflineWait.Seconds()
	}
	return ConfigReport{
		Scenarios: c.scenarios(), Strategies: c.strategyNames(), Exec: c.Exec, Consumer: c.ConsumerKind, Protocol: cmp.Or(c.Protocol, ProtocolHTTP), Method: c.Method,
		Path: c.request().Path, BodyBytes: len(c.request().Body),
		Replicas: c.Replicas, Rate: c.Rate, Consumers: c.Consumers,
		RequestTimeout: c.RequestTimeout.Seconds(),
		Discovery:      c.discoveryName(), DiscoveryInterval: c.DiscoveryInterval.Seconds(), FailureThreshold: c.FailureThreshold,
		ConsumerCache: c.ConsumerCache.Seconds(), Consul: c.Consul, Etcd: c.Etcd, Nacos: c.Nacos,
		Baseline: c.Baseline.Seconds(), Tail: c.Tail.Seconds(), StaleWait: c.StaleWait().Seconds(), PreStop: c.PreStop,
		Sequential: c.Sequential, Timings: tm, TimingSources: c.TimingSources, NacosPoll: poll, OfflineWait: wait,
	}
}

// JSONReport is the shape of `drainkit drill --json`.
type JSONReport struct {
	SchemaVersion int          `json:"schema_version"`
	Strategies    []Summary    `json:"strategies"`
	Config        ConfigReport `json:"config"`
	WallTime      float64      `json:"wall_time_s"`
	Passed        bool         `json:"passed"`
	// Valid is false when the service answered HTTP errors before any stop
	// (InvalidCause "service") or the machine could not sustain the load
	// ("machine"; see Validity); the numbers then say nothing about the
	// strategies.
	Valid         bool   `json:"valid"`
	InvalidCause  string `json:"invalid_cause,omitempty"`
	InvalidReason string `json:"invalid_reason,omitempty"`
}

// WriteJSON writes res as indented JSON.
func WriteJSON(w io.Writer, res *Result, sums []Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	v := Judge(res, sums)
	return enc.Encode(JSONReport{
		SchemaVersion: SchemaVersion,
		Strategies:    sums,
		Config:        res.Config.Report(),
		WallTime:      secs(res.Wall),
		Passed:        Passed(res, sums),
		Valid:         v.Valid,
		InvalidCause:  v.Cause,
		InvalidReason: v.Reason,
	})
}
