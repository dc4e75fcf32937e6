package consumer

import (
	"cmp"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/drainkit/drainkit/registry"
)

// SchemeGap is the part of a service's view that a consumer of one endpoint
// scheme cannot dial: the instances that list endpoints, none of them of
// that scheme (registry.Instance.ForScheme), and so are left out. A view
// whose every instance is such is invisible to the consumer (an HTTP
// consumer of gRPC-only providers, a gRPC resolver fed a Source filtered to
// "http"): its calls fail for want of an instance though the registry lists
// some. The zero value is no gap.
type SchemeGap struct {
	// Scheme is the endpoint scheme the consumer dials, lower case.
	Scheme string `json:"scheme"`
	// Listed is the number of instances the view lists.
	Listed int `json:"listed"`
	// Missing is the number of them left out for serving no endpoint of
	// Scheme.
	Missing int `json:"missing"`
	// Offered are the schemes the instances left out serve instead, sorted
	// and distinct; nil without any.
	Offered []string `json:"offered,omitempty"`
}

// Blind reports whether the view lists instances and the consumer can dial
// none of them.
func (g SchemeGap) Blind() bool { return g.Missing > 0 && g.Missing == g.Listed }

// SchemeCheck follows the views of one consumer of service that dials the
// endpoints of scheme: Dialled gives each view's instances as the consumer
// dials them, and the first view of a streak in which the consumer is blind
// (SchemeGap.Blind) is logged at warning level, naming the service, the
// scheme asked for and the schemes the instances offer; the streak's end is
// logged at info level. Gap returns the last view's gap, for Status. Used by
// Transport and by consumer/grpcresolver. A SchemeCheck must not be copied
// after first use; its methods are safe for concurrent use.
type SchemeCheck struct {
	service, scheme string
	log             *slog.Logger

	mu  sync.Mutex
	gap SchemeGap
}

// NewSchemeCheck returns the check of a consumer of service dialling
// scheme ("" dials every instance at its address, and never misses one),
// logging to log (nil means slog.Default()).
func NewSchemeCheck(service, scheme string, log *slog.Logger) *SchemeCheck {
	return &SchemeCheck{service: service, scheme: strings.ToLower(scheme), log: cmp.Or(log, slog.Default())}
}

// Dialled returns v's instances that serve an endpoint of the check's
// scheme, each with Address and Port set to that endpoint's, in v's order,
// and records (and logs, see SchemeCheck) the view's gap.
func (c *SchemeCheck) Dialled(v registry.View) []registry.Instance {
	gap := SchemeGap{Scheme: c.scheme, Listed: len(v.Instances)}
	out := make([]registry.Instance, 0, len(v.Instances))
	for _, in := range v.Instances {
		if d, ok := in.ForScheme(c.scheme); ok {
			out = append(out, d)
			continue
		}
		gap.Missing++
		for _, e := range in.Endpoints {
			gap.Offered = append(gap.Offered, strings.ToLower(e.Scheme))
		}
	}
	slices.Sort(gap.Offered)
	gap.Offered = slices.Compact(gap.Offered)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch was := c.gap.Blind(); {
	case gap.Blind() && !was:
		c.log.Warn("consumer: the registry lists instances of the service but none serves the endpoint scheme this consumer dials; every call fails until one does",
			"service", c.service, "scheme", c.scheme, "instances", gap.Listed, "offered", strings.Join(gap.Offered, ","))
	case was && !gap.Blind():
		c.log.Info("consumer: the service's view no longer lists only instances without the endpoint scheme this consumer dials",
			"service", c.service, "scheme", c.scheme, "dialled", len(out), "instances", gap.Listed)
	}
	c.gap = gap
	return out
}

// Gap returns the gap of the last view given to Dialled.
func (c *SchemeCheck) Gap() SchemeGap {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gap
}
