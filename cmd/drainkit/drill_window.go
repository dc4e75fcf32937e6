package main

import (
	"fmt"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/drill"
	"github.com/spf13/pflag"
)

// windowFlags are the drill's flags for the consumers a propagation window
// must wait for (issue 32): the per-consumer rate of slow consumers.
type windowFlags struct {
	consumerRate float64
}

// bind adds --consumer-rate.
func (w *windowFlags) bind(f *pflag.FlagSet) {
	f.Float64Var(&w.consumerRate, "consumer-rate", 0, "request rate of each consumer, requests/s (sets --rate to this times --consumers): a slow consumer, e.g. 2 with --consumer cached; 0: --rate decides")
}

// complete applies the flags to cfg: --consumer-rate sets the rate, and
// --consumer cached or spring without --consumer-cache gets Spring Cloud
// LoadBalancer's default cache (drill.SpringCacheTTL). Both --rate and
// --consumer-rate is a usage error.
func (w *windowFlags) complete(flags *pflag.FlagSet, cfg *drill.Config) error {
	if (cfg.ConsumerKind == drill.ConsumerCached || cfg.ConsumerKind == drill.ConsumerSpring) && !flags.Changed("consumer-cache") {
		cfg.ConsumerCache = drill.SpringCacheTTL
	}
	if !flags.Changed("consumer-rate") {
		return nil
	}
	if flags.Changed("rate") {
		return fmt.Errorf("--rate and --consumer-rate: give one (--rate is all consumers together)")
	}
	if w.consumerRate <= 0 {
		return fmt.Errorf("--consumer-rate: %g is out of range: must be > 0 requests/s", w.consumerRate)
	}
	cfg.Rate = w.consumerRate * float64(cfg.Consumers)
	return nil
}
