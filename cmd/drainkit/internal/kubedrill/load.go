package kubedrill

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/kubedrill/kubeload"
	"github.com/drainkit/drainkit/cmd/drainkit/internal/serve"
)

// LoadKind is one way a load pod reaches the service under drill. What
// the load pod does per request is its kubeload.Sender, in the binary that
// runs the pod (Senders for the drainkit command's).
type LoadKind struct {
	// Doc says what the kind is, for --help.
	Doc string
	// target is the load pod's --target for the Service name in namespace
	// whose ClusterIP is clusterIP.
	target func(namespace, service, clusterIP string) string
	// ownImage: the kind's load pods run Config.SlicesImage (a binary with
	// a Kubernetes client) rather than Config.Image, under the drill's
	// ServiceAccount that may read the namespace's EndpointSlices.
	ownImage bool
}

// LoadKinds are the load kinds by name. The drill gives every kind the
// same pods, rate and report; each kind it runs gets a load pod of its own
// per strategy, all sending through the same rollout.
var LoadKinds = map[string]LoadKind{
	LoadService: {
		Doc:    "HTTP through the Service's ClusterIP (kube-proxy's rules), a new connection per request, no retry",
		target: func(_, _, clusterIP string) string { return "http://" + clusterIP + ":80/" },
	},
	LoadEndpointSlices: {
		Doc: "HTTP to the pod IPs through drainkit's consumer (consumer.Transport over registry/kubernetes's EndpointSlice source, " +
			"its defaults: failover, idempotent retries, ejection); from --kube-slices-image",
		target:   func(namespace, service, _ string) string { return namespace + "/" + service },
		ownImage: true,
	},
}

// The load kinds.
const (
	// LoadService goes through the Service's ClusterIP.
	LoadService = kubeload.Service
	// LoadEndpointSlices goes through drainkit's consumer fed by the
	// Service's EndpointSlices. Its sender is not in the drainkit command:
	// it needs client-go (registry/kubernetes), which the command does not
	// link; the load pods run the binary of the module
	// cmd/drainkit/internal/kubeslices instead (Config.SlicesImage).
	LoadEndpointSlices = kubeload.EndpointSlices
)

// Senders are the load kinds the drainkit command's `kube-load` sends.
var Senders = map[string]kubeload.NewSender{LoadService: newServiceSender}

// loadKindNames lists LoadKinds' names, sorted.
func loadKindNames() []string {
	var names []string
	for n := range LoadKinds {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// serviceSender is LoadService: a new TCP connection per request, so that
// each request is balanced by kube-proxy's rules as they are at that
// instant (a keep-alive connection would stay on its pod and hide when the
// rules changed), and no retry.
type serviceSender struct {
	client *http.Client
	url    string
}

func newServiceSender(o kubeload.Options) (kubeload.Sender, error) {
	if !strings.HasPrefix(o.Target, "http://") {
		return nil, fmt.Errorf("kube-load: --target %q: want http://HOST:PORT/PATH", o.Target)
	}
	tr := &http.Transport{DisableKeepAlives: true}
	return &serviceSender{client: &http.Client{Transport: tr, Timeout: o.RequestTimeout}, url: o.Target}, nil
}

func (s *serviceSender) Send(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return "", err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	by := resp.Header.Get(serve.ServedByHeader)
	if resp.StatusCode >= 500 {
		return by, fmt.Errorf("HTTP %s", resp.Status)
	}
	return by, err
}

func (s *serviceSender) Close() { s.client.CloseIdleConnections() }
