// Command pause is the sandbox ("pause") container of drainkit's test cluster:
// it holds a pod's namespaces open and does nothing until the kubelet stops
// the pod. scripts/kube.sh builds it as a static binary next to the
// Kubernetes commands, and the test harness packs it into the image that
// containerd's sandbox_image names, so the cluster needs no registry.
//
// It exits 0 at SIGTERM or SIGINT. As PID 1 of the sandbox it also reaps
// the zombies that processes sharing its PID namespace leave behind, which
// a Go program gets by ignoring SIGCHLD (the kernel then reaps them).
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// Ignoring SIGCHLD makes the kernel reap exited children at once.
	signal.Ignore(syscall.SIGCHLD)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
