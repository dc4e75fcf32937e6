// Command kubeslices is the load program of `drainkit drill --kubernetes
// --kube-load endpointslices`: `kubeslices kube-load --via endpointslices
// --target NAMESPACE/SERVICE` sends through drainkit's consumer
// (consumer.Watcher and consumer.Transport, their defaults) fed by
// registry/kubernetes's EndpointSlice source, straight to the pod IPs, as a
// user's client on the cluster would, instead of through the Service's
// ClusterIP (kube-proxy).
//
// It is a module of its own, outside go.work, because it links client-go
// (through registry/kubernetes): the drainkit command, which every user
// installs, must not pay for a Kubernetes client that only this load kind
// needs (the drill itself drives the cluster with kubectl). A build tag
// in cmd/drainkit would have put client-go into cmd/drainkit's go.mod and
// module graph all the same. The drill runs this binary as the image of
// the endpointslices load pods (--kube-slices-image), under a
// ServiceAccount that may read the namespace's EndpointSlices; the load
// loop and its report are kubeload's, shared with the drainkit command.
//
// Build it static, like the drainkit binary for the service image:
//
//	GOWORK=off CGO_ENABLED=0 go build -C cmd/drainkit/internal/kubeslices -o kubeslices .
package main

import (
	"fmt"
	"os"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/kubedrill/kubeload"
	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:           "kubeslices",
		Short:         "the endpointslices load pod of drainkit drill --kubernetes",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(kubeload.NewCommand(map[string]kubeload.NewSender{kubeload.EndpointSlices: newSlicesSender}))
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "kubeslices:", err)
		os.Exit(1)
	}
}
