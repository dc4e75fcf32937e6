package main

import (
	"github.com/drainkit/drainkit/cmd/drainkit/internal/kubedrill"
	"github.com/drainkit/drainkit/cmd/drainkit/internal/kubedrill/kubeload"
	"github.com/spf13/cobra"
)

// newKubeLoadCmd is the hidden load program that `drill --kubernetes` runs
// in its load pods: it sends until SIGTERM, then prints its summary. This
// binary sends the kinds that need no Kubernetes client (kubedrill.Senders);
// the EndpointSlice kind runs from its own image (kubedrill.LoadEndpointSlices).
func newKubeLoadCmd() *cobra.Command {
	cmd := kubeload.NewCommand(kubedrill.Senders)
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if err := run(c, args); err != nil {
			return &exitError{code: 1, msg: err.Error()}
		}
		return nil
	}
	return cmd
}
