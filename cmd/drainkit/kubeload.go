package main

import (
	"os/signal"
	"syscall"
	"time"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/kubedrill"
	"github.com/spf13/cobra"
)

// newKubeLoadCmd is the hidden load program that `drill --kubernetes` runs
// in its load pods: it sends until SIGTERM, then prints its summary.
func newKubeLoadCmd() *cobra.Command {
	o := kubedrill.LoadOptions{Via: kubedrill.LoadService, Rate: 200, RequestTimeout: 2 * time.Second}
	cmd := &cobra.Command{
		Use:    "kube-load",
		Short:  "the load pod of drill --kubernetes (used by drill)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			if err := kubedrill.RunLoad(ctx, o, cmd.OutOrStdout()); err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Via, "via", o.Via, "load kind")
	f.StringVar(&o.Target, "target", "", "what the load kind sends to (service: http://CLUSTER-IP:PORT/)")
	f.Float64Var(&o.Rate, "rate", o.Rate, "requests/s")
	f.DurationVar(&o.RequestTimeout, "request-timeout", o.RequestTimeout, "timeout of each request")
	return cmd
}
