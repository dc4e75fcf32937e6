package kubedrill

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/kubedrill/kubeload"
)

// Result is a Kubernetes drill's outcome.
type Result struct {
	Namespace     string           `json:"namespace"`
	Replicas      int              `json:"replicas"`
	RatePerSecond float64          `json:"rate_per_s"`
	Loads         []string         `json:"loads"`
	PreStopSleepS int              `json:"prestop_sleep_s"`
	Concurrent    bool             `json:"concurrent"`
	RulesRead     bool             `json:"kube_proxy_rules_read"`
	Strategies    []StrategyResult `json:"strategies"`
	// Invalid, if not empty, says why the run measured the machine rather
	// than the strategies (requests failed before the restart, the load
	// fell behind its schedule).
	Invalid string `json:"invalid_reason,omitempty"`
}

// StrategyResult is one strategy's requests through one load kind, and
// its old pods (the same pods for each load kind of the strategy, with the
// requests of that kind). Its instants are milliseconds from its `kubectl
// rollout restart` (RestartUnixMS), on the drill's clock.
type StrategyResult struct {
	Strategy string `json:"strategy"`
	// Load is the load kind (LoadKinds) the requests went through.
	Load          string `json:"load"`
	RestartUnixMS int64  `json:"restart_unix_ms"`
	Sent          int    `json:"sent"`
	Failed        int    `json:"failed"`
	// FailedBeforeRestart were sent before the restart: none may fail.
	FailedBeforeRestart int   `json:"failed_before_restart"`
	MaxLagMS            int64 `json:"max_lag_ms"`
	// Unattributed failures fell in no old pod's termination.
	Unattributed int         `json:"failed_unattributed"`
	Pods         []PodResult `json:"pods"`
	// DrainMS are the old pods' drain times: min, median, max.
	DrainMinMS    int64 `json:"drain_min_ms"`
	DrainMedianMS int64 `json:"drain_median_ms"`
	DrainMaxMS    int64 `json:"drain_max_ms"`
	// FailedPerSecond counts the failures by the second (from the
	// restart) they were sent in, up to the last.
	FailedPerSecond []int `json:"failed_per_second"`
	// Errors are the distinct failure messages with their counts.
	Errors map[string]int `json:"errors,omitempty"`
}

// PodResult is one old pod. Each instant is ms from the restart; nil when
// not seen.
type PodResult struct {
	Pod string `json:"pod"`
	IP  string `json:"ip"`
	// DeletedMS is the pod's deletion: the kubelet starts terminating it
	// (the preStop hook, or SIGTERM without one).
	DeletedMS *int64 `json:"deleted_ms"`
	SIGTERMMS *int64 `json:"sigterm_ms"`
	// NotReadyMS, NotServingMS and TerminatingMS are the EndpointSlice's
	// conditions; RemovedMS the endpoint leaving the slices.
	NotReadyMS    *int64 `json:"slice_ready_false_ms"`
	NotServingMS  *int64 `json:"slice_serving_false_ms"`
	TerminatingMS *int64 `json:"slice_terminating_ms"`
	RemovedMS     *int64 `json:"slice_removed_ms"`
	// RulesGoneMS is kube-proxy's rules without the pod.
	RulesGoneMS *int64 `json:"kube_proxy_rules_gone_ms"`
	// LastRequestMS is when the last request the pod answered was sent.
	LastRequestMS *int64 `json:"last_request_ms"`
	// DoneMS is the service process's last log line (its drain over, it
	// exits); ExitedMS the kubelet reporting the container terminated.
	DoneMS   *int64 `json:"process_done_ms"`
	ExitedMS *int64 `json:"exited_ms"`
	// DrainMS is the deletion to the process's end (DoneMS, else
	// ExitedMS): how long the pod took to drain, without the kubelet's
	// delay in reporting the exit.
	DrainMS int64 `json:"drain_ms"`
	// Failed are the failures attributed to the pod (see attribute).
	Failed int `json:"failed"`
	// Served is how many requests it answered.
	Served int `json:"served"`
}

// failureSlack extends an old pod's span for attributing failures past its
// exit: kube-proxy may send new connections to its address until the
// rules go (RulesGoneMS), and a request sent just before fails just after.
const failureSlack = time.Second

// build makes the result of the strategy through load kind load from the
// old pods' tracks and the load pod's summary.
func build(strategy, load string, restart time.Time, old []podTrack, sum *kubeload.Summary) StrategyResult {
	ms := func(t time.Time) *int64 {
		if t.IsZero() {
			return nil
		}
		v := t.Sub(restart).Milliseconds()
		return &v
	}
	r := StrategyResult{Strategy: strategy, Load: load, RestartUnixMS: restart.UnixMilli(), Errors: map[string]int{}}
	if sum != nil {
		r.Sent, r.Failed, r.MaxLagMS = sum.Sent, sum.Failed+sum.Dropped, sum.MaxLagMS
	}
	slices.SortFunc(old, func(a, b podTrack) int { return a.deleted.Compare(b.deleted) })
	var drains []int64
	for _, p := range old {
		pr := PodResult{
			Pod: p.name, IP: p.ip, DeletedMS: ms(p.deleted), SIGTERMMS: ms(p.sigterm),
			NotReadyMS: ms(p.notReady), NotServingMS: ms(p.notServing), TerminatingMS: ms(p.terminating), RemovedMS: ms(p.removed),
			RulesGoneMS: ms(p.rulesGone), DoneMS: ms(p.done), ExitedMS: ms(p.exited),
		}
		end := p.done
		if end.IsZero() {
			end = p.exited
		}
		if !p.deleted.IsZero() && !end.IsZero() {
			pr.DrainMS = end.Sub(p.deleted).Milliseconds()
			drains = append(drains, pr.DrainMS)
		}
		if sum != nil {
			if c := sum.ByPod[p.ip]; c != nil {
				pr.Served = c.N
				pr.LastRequestMS = ms(time.UnixMilli(c.LastMS))
			}
		}
		r.Pods = append(r.Pods, pr)
	}
	if len(drains) > 0 {
		slices.Sort(drains)
		r.DrainMinMS, r.DrainMedianMS, r.DrainMaxMS = drains[0], drains[len(drains)/2], drains[len(drains)-1]
	}
	if sum == nil {
		return r
	}
	for _, f := range sum.Failures {
		r.Errors[errorClass(f.Error)]++
		sent := time.UnixMilli(f.SentMS)
		if sent.Before(restart) {
			r.FailedBeforeRestart++
			continue
		}
		sec := int(sent.Sub(restart) / time.Second)
		for len(r.FailedPerSecond) <= sec {
			r.FailedPerSecond = append(r.FailedPerSecond, 0)
		}
		r.FailedPerSecond[sec]++
		if i := attribute(old, sent, f.ServedBy); i >= 0 {
			r.Pods[i].Failed++
		} else {
			r.Unattributed++
		}
	}
	return r
}

// attribute returns the index in old (sorted by deletion) of the pod a
// failure sent at sent is laid on, -1 for none: the pod that answered it
// if it says (a 5xx), else the last old pod deleted at or before sent
// whose span (deletion to exit or rules gone, whichever is later, plus
// failureSlack) holds sent. A request through a Service does not say
// which pod a refused connection was sent to, so this is by time: with
// terminations overlapping, a failure goes to the latest one.
func attribute(old []podTrack, sent time.Time, servedBy string) int {
	if servedBy != "" {
		for i, p := range old {
			if p.ip == servedBy {
				return i
			}
		}
	}
	best := -1
	for i, p := range old {
		if p.deleted.IsZero() || sent.Before(p.deleted) {
			continue
		}
		end := p.exited
		if p.rulesGone.After(end) {
			end = p.rulesGone
		}
		if end.IsZero() || sent.Before(end.Add(failureSlack)) {
			best = i
		}
	}
	return best
}

// errorClass shortens a request error to what tells failures apart
// ("connection refused", "HTTP 503 ..."): an error of Go's HTTP client
// names the URL and addresses first.
func errorClass(msg string) string {
	for _, k := range []string{"connection refused", "connection reset by peer", "Client.Timeout exceeded", "EOF", "no route to host", "i/o timeout"} {
		if strings.Contains(msg, k) {
			return k
		}
	}
	return msg
}

// sortStrategies orders rs as Strategies lists them, and a strategy's
// results as loads lists their kinds.
func sortStrategies(rs []StrategyResult, loads []string) {
	slices.SortStableFunc(rs, func(a, b StrategyResult) int {
		if c := cmp.Compare(slices.Index(Strategies, a.Strategy), slices.Index(Strategies, b.Strategy)); c != 0 {
			return c
		}
		return cmp.Compare(slices.Index(loads, a.Load), slices.Index(loads, b.Load))
	})
}
