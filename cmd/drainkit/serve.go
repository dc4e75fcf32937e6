package main

import (
	"github.com/drainkit/drainkit/cmd/drainkit/internal/serve"
	"github.com/drainkit/drainkit/config"
	"github.com/spf13/cobra"
)

// newServeCmd is the hidden service mode the drill re-executes itself in.
func newServeCmd() *cobra.Command {
	var o serve.Options
	cmd := &cobra.Command{
		Use:    "serve",
		Short:  "run the example service under one shutdown strategy (used by drill)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Load(config.Sources{Flags: cmd.Flags()})
			if err != nil {
				return &exitError{code: 2, msg: "serve: " + err.Error()}
			}
			o.Config = cfg
			if o.Service == "" {
				o.Service = cfg.Registry.Service
			}
			if code := serve.Run(o); code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Strategy, "strategy", "drainkit", "shutdown strategy: drainkit, shutdown, exit, kill or offline-kill")
	f.StringVar(&o.HTTPAddr, "http-addr", "127.0.0.1:8080", "service listener address")
	f.StringVar(&o.GRPCAddr, "grpc-addr", "", "also serve the example's gRPC service (grpc-go's interop TestService and health) on this address, registered as the \"grpc\" endpoint; empty: HTTP only")
	f.DurationVar(&o.Warmup, "warmup", 0, "the example's warm-up: every request before it is over gets 503; the drainkit strategy fails readiness meanwhile")
	f.StringVar(&o.CheckBlockDir, "check-block-dir", "", "the drainkit strategy's readiness check blocks (until checks.timeout) while DIR/<http port> exists")
	f.IntVar(&o.Capacity, "capacity", 0, "serve at most this many requests at once, answer 503 \"over capacity\" beyond it; 0: no limit")
	f.StringVar(&o.BrownoutDir, "brownout-dir", "", "every service request waits 5s (or until its client gives up) while DIR/<http port> exists; readiness is not affected")
	f.StringVar(&o.Service, "service", "", "register under this service name: in etcd when ETCD_ENDPOINTS is set, else in Nacos when registry.nacos.server_addr or NACOS_SERVER_ADDR is, else in Consul (CONSUL_HTTP_ADDR)")
	config.BindFlags(f)
	return cmd
}
