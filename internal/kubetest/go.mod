module github.com/drainkit/drainkit/internal/kubetest

// A module of its own outside go.work, like tools/*: its tests bring up a
// Kubernetes cluster (root, minutes, Debian packages); `make kube` runs
// them, and .ci/run runs that after `make test`.
go 1.25.0

require (
	github.com/drainkit/drainkit v0.0.0-00010101000000-000000000000
	go.uber.org/goleak v0.10.0
	golang.org/x/sys v0.29.0
)

require github.com/stretchr/testify v1.12.1 // indirect

replace github.com/drainkit/drainkit => ../..
