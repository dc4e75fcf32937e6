package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/drainkit/drainkit"
)

// defaultAdminAddr is the example's admin listener unless admin.addr is set:
// loopback, unlike the entry point's ":8081", so that running the example
// exposes nothing.
const defaultAdminAddr = "127.0.0.1:8081"

// flags are the example's own command-line flags; the entry point adds
// --http-addr, --admin-addr, --config and the drainkit keys.
type flags struct {
	warmup            time.Duration
	failReadinessFile string
	service           string
}

func (f *flags) define(fs *pflag.FlagSet) {
	fs.DurationVar(&f.warmup, "warmup", 0, "simulated warm-up duration, e.g. 2s (>= 0s, < warmup.timeout)")
	fs.StringVar(&f.failReadinessFile, "fail-readiness-file", "", "add a readiness check that fails while this file exists (rounds every checks.interval)")
	fs.StringVar(&f.service, "service", "httpservice", "service name to register in Consul (CONSUL_HTTP_ADDR) or etcd (ETCD_ENDPOINTS) (registry.service overrides)")
}

// validate checks the example's own flags; it returns one line naming the
// flag.
func (f *flags) validate(warmupTimeout time.Duration) error {
	if f.warmup < 0 || f.warmup >= warmupTimeout {
		return fmt.Errorf("--warmup: %s is out of range: must be >= 0s and < warmup.timeout (%s)", f.warmup, warmupTimeout)
	}
	return nil
}

// lifecycleOptions are the readiness check and the simulated warm-up the
// flags ask for.
func (f *flags) lifecycleOptions() []drainkit.Option {
	var opts []drainkit.Option
	if f.failReadinessFile != "" {
		opts = append(opts, drainkit.WithCheck("fail-readiness-file", fileCheck(f.failReadinessFile)))
	}
	if f.warmup > 0 {
		opts = append(opts, drainkit.OnWarmup("simulated", func(ctx context.Context) error {
			// Like internal/syncx.Sleep, written out: users copy this
			// example, and their code cannot import drainkit's internal
			// packages.
			t := time.NewTimer(f.warmup)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}))
	}
	return opts
}
