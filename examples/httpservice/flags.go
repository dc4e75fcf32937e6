package main

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/drainkit/drainkit/config"
)

// defaultAdminAddr is the example's admin listener unless admin.addr is set:
// loopback, unlike config's ":8081", so that running the example exposes
// nothing.
const defaultAdminAddr = "127.0.0.1:8081"

// flags are the example's own command-line flags. config.BindFlags adds the
// drainkit keys (--propagation-min, --admin-token, --config, ...).
type flags struct {
	httpAddr          string
	warmup            time.Duration
	failReadinessFile string
}

func defineFlags(fs *pflag.FlagSet) *flags {
	f := &flags{}
	fs.StringVar(&f.httpAddr, "http-addr", "127.0.0.1:8080", "service listener, host:port (port 0 picks a free port)")
	// Defined here for its default; config.Load reads it as key admin.addr.
	fs.String(config.FlagName("admin.addr"), defaultAdminAddr,
		"admin listener for probes, /state and /drain, host:port (env "+config.EnvVar("admin.addr")+"; port 0 picks a free port)")
	fs.DurationVar(&f.warmup, "warmup", 0, "simulated warm-up duration, e.g. 2s (>= 0s, < warmup.timeout)")
	fs.StringVar(&f.failReadinessFile, "fail-readiness-file", "", "add a readiness check that fails while this file exists (rounds every checks.interval)")
	config.BindFlags(fs)
	return f
}

// adminAddr is admin.addr when a flag, the environment or the file set it,
// else defaultAdminAddr.
func adminAddr(cfg *config.Config) string {
	if cfg.Source("admin.addr").Kind == config.FromDefault {
		return defaultAdminAddr
	}
	return cfg.Admin.Addr
}

// validate checks the example's own flags; it returns one line naming the
// flag.
func (f *flags) validate(warmupTimeout time.Duration) error {
	if err := checkAddr(f.httpAddr); err != nil {
		return fmt.Errorf("--http-addr: %q %v (want host:port, e.g. 127.0.0.1:8080)", f.httpAddr, err)
	}
	if f.warmup < 0 || f.warmup >= warmupTimeout {
		return fmt.Errorf("--warmup: %s is out of range: must be >= 0s and < warmup.timeout (%s)", f.warmup, warmupTimeout)
	}
	return nil
}

func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("is not host:port")
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("has no numeric port 0..65535")
	}
	return nil
}
