package drill

import (
	"fmt"
	"math"
	"time"

	"github.com/drainkit/drainkit/lifecycle/budget"
)

// defaultPodSlack is Config.PodSlack's zero value.
const defaultPodSlack = budget.PodSlack

// windowFix names, in one clause, every setting that must change for the
// propagation window to outlast a consumer staleness of staleness seconds,
// with its value: propagation.max (the staleness plus one quiet period,
// rounded up to a second), the grace_period that must grow with it
// (budget.Timings.MinGracePeriod) and the pod's
// terminationGracePeriodSeconds (grace_period plus Config.PodSlack).
func windowFix(cfg Config, staleness float64) string {
	t := cfg.Timings
	needMax := time.Duration(math.Ceil(staleness+t.PropagationQuiet.Seconds())) * time.Second
	t.PropagationMax = max(t.PropagationMax, needMax)
	grace := max(t.GracePeriod, t.MinGracePeriod())
	slack := cfg.PodSlack
	if slack <= 0 {
		slack = defaultPodSlack
	}
	tgps := int64(math.Ceil((grace + slack).Seconds()))
	graceClause := fmt.Sprintf("grace_period to at least %s (propagation.max + drain.timeout %s + stop.timeout %s + margin)",
		grace, t.DrainTimeout, t.StopTimeout)
	if grace == cfg.Timings.GracePeriod {
		graceClause = fmt.Sprintf("keep grace_period %s (it covers the longer window)", grace)
	}
	return fmt.Sprintf("fix: set propagation.max to at least %s, %s and the pod's terminationGracePeriodSeconds to at least %d (grace_period + %s), or shorten the consumers' caching below %.1fs",
		t.PropagationMax, graceClause, tgps, slack, max(0, cfg.Timings.PropagationMax.Seconds()-t.PropagationQuiet.Seconds()))
}
