package drill

import (
	"encoding/json"
	"io"
	"time"
)

// ConfigReport is the drill's configuration as the JSON output and the
// reports show it.
type ConfigReport struct {
	Strategies        []string          `json:"strategies"`
	Consumer          string            `json:"consumer"`
	Method            string            `json:"method"`
	Exec              string            `json:"exec,omitempty"`
	Replicas          int               `json:"replicas"`
	Rate              float64           `json:"rate_per_second"`
	Consumers         int               `json:"consumers"`
	RequestTimeout    string            `json:"request_timeout"`
	Discovery         string            `json:"discovery"`
	DiscoveryInterval string            `json:"discovery_interval"`
	FailureThreshold  int               `json:"failure_threshold"`
	ConsumerCache     string            `json:"consumer_cache"`
	Consul            string            `json:"consul,omitempty"`
	Etcd              string            `json:"etcd,omitempty"`
	Baseline          string            `json:"baseline"`
	Tail              string            `json:"tail"`
	StaleWait         string            `json:"stale_wait"`
	PreStop           bool              `json:"prestop"`
	Timings           map[string]string `json:"timings"`
	TimingSources     map[string]string `json:"timing_sources,omitempty"`
}

// Report builds the configuration report.
func (c Config) Report() ConfigReport {
	disc := "readiness probes"
	if c.Consul != "" {
		disc = "consul watch"
	}
	if c.Etcd != "" {
		disc = "etcd watch"
	}
	t := c.Timings
	return ConfigReport{
		Strategies: c.strategyNames(), Exec: c.Exec, Consumer: c.ConsumerKind, Method: c.Method,
		Replicas: c.Replicas, Rate: c.Rate, Consumers: c.Consumers,
		RequestTimeout: c.RequestTimeout.String(),
		Discovery:      disc, DiscoveryInterval: c.DiscoveryInterval.String(), FailureThreshold: c.FailureThreshold,
		ConsumerCache: c.ConsumerCache.String(), Consul: c.Consul, Etcd: c.Etcd,
		Baseline: c.Baseline.String(), Tail: c.Tail.String(), StaleWait: c.StaleWait().String(), PreStop: c.PreStop,
		Timings: map[string]string{
			"warmup.timeout":    t.WarmupTimeout.String(),
			"propagation.min":   t.PropagationMin.String(),
			"propagation.quiet": t.PropagationQuiet.String(),
			"propagation.max":   t.PropagationMax.String(),
			"drain.timeout":     t.DrainTimeout.String(),
			"stop.timeout":      t.StopTimeout.String(),
			"grace_period":      t.GracePeriod.String(),
		},
		TimingSources: c.TimingSources,
	}
}

// JSONReport is the shape of `drainkit drill --json`.
type JSONReport struct {
	Strategies  []Summary    `json:"strategies"`
	Config      ConfigReport `json:"config"`
	WallSeconds float64      `json:"wall_seconds"`
	Passed      bool         `json:"passed"`
}

// WriteJSON writes res as indented JSON.
func WriteJSON(w io.Writer, res *Result, sums []Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(JSONReport{
		Strategies:  sums,
		Config:      res.Config.Report(),
		WallSeconds: float64(res.Wall.Round(time.Millisecond)) / float64(time.Second),
		Passed:      Passed(res, sums),
	})
}
