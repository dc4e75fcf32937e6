//go:build linux

package clustertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/internal/kubetest"
	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/internal/testpoll"
	"github.com/drainkit/drainkit/registry"
	dkube "github.com/drainkit/drainkit/registry/kubernetes"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// ns is the namespace of every object the tests create.
const ns = "default"

// waitFor bounds each wait for the cluster to reach a state (pods start,
// the controllers update the slices): minutes on a busy machine.
const waitFor = 3 * time.Minute

// TestEndpointSlices brings one cluster up (a minute or more) and runs the
// source's scenarios on it, each on a Service of its own.
func TestEndpointSlices(t *testing.T) {
	c := kubetest.Start(t)
	admin := newClient(t, c, c.DialContext)
	t.Run("TwoSlices", func(t *testing.T) { testTwoSlices(t, admin) })
	t.Run("Relist", func(t *testing.T) { testRelist(t, c, admin) })
	t.Run("Pods", func(t *testing.T) { testPods(t, c, admin) })
	t.Run("GRPC", func(t *testing.T) { testGRPC(t, c, admin) })
}

// newClient returns a clientset of the cluster's admin that dials with
// dial (inside the cluster's network namespace). Its connections are
// closed at the end of the test.
func newClient(t *testing.T, c *kubetest.Cluster, dial func(context.Context, string, string) (net.Conn, error)) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dial = dial
	// The client certificate inline: from files, client-go starts a
	// rotation goroutine per client that nothing stops (goleak).
	if cfg.CertData, err = os.ReadFile(cfg.CertFile); err != nil {
		t.Fatal(err)
	}
	if cfg.KeyData, err = os.ReadFile(cfg.KeyFile); err != nil {
		t.Fatal(err)
	}
	cfg.CertFile, cfg.KeyFile = "", ""
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hc.CloseIdleConnections)
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// views records the views of one Watch call.
type views struct {
	mu  sync.Mutex
	all []registry.View
}

// watch runs dkube.Watch of service until the test ends.
func watch(t *testing.T, client kubernetes.Interface, service string, opts dkube.WatchOptions) *views {
	t.Helper()
	lg, _ := testlog.New(t, "source log")
	opts.Logger = lg
	ctx, cancel := context.WithCancel(context.Background())
	v := &views{}
	done := make(chan error, 1)
	go func() { done <- dkube.Watch(ctx, client, ns, service, opts, v.add) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Watch returned %v, want context.Canceled", err)
		}
	})
	return v
}

func (v *views) add(view registry.View) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.all = append(v.all, view)
}

// await waits until the latest view satisfies cond and returns it.
func (v *views) await(t *testing.T, what string, cond func(registry.View) bool) registry.View {
	t.Helper()
	var got registry.View
	testpoll.Eventually(t, waitFor, what, func() (bool, string) {
		v.mu.Lock()
		defer v.mu.Unlock()
		if len(v.all) == 0 {
			return false, "no view yet"
		}
		got = v.all[len(v.all)-1]
		return cond(got), describe(got)
	})
	return got
}

// checkOrder fails t unless the views of one Watch call are ordered as
// registry.Source requires: (Epoch, Revision) never lower.
func (v *views) checkOrder(t *testing.T) {
	t.Helper()
	v.mu.Lock()
	defer v.mu.Unlock()
	for i := 1; i < len(v.all); i++ {
		if v.all[i].Err == nil && v.all[i].OlderThan(v.all[i-1]) {
			t.Errorf("view %d (%s) is older than view %d (%s)", i, describe(v.all[i]), i-1, describe(v.all[i-1]))
		}
	}
}

func describe(v registry.View) string {
	var b strings.Builder
	fmt.Fprintf(&b, "revision %d epoch %d err %v:", v.Revision, v.Epoch, v.Err)
	for _, in := range v.Instances {
		fmt.Fprintf(&b, " %s:%d%v", in.ID, in.Port, in.Meta)
	}
	return b.String()
}

func ids(v registry.View) []string {
	out := []string{}
	for _, in := range v.Instances {
		out = append(out, in.ID)
	}
	return out
}

func idsAre(want ...string) func(registry.View) bool {
	return func(v registry.View) bool { return v.Err == nil && slices.Equal(ids(v), want) }
}

// Slices written by hand (a Service without selector, so the
// EndpointSlice controller leaves them alone), as a second writer of a
// Service's slices would: merged, deduplicated, conditions and hints read.
func slice(name, service string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	portName, port := "http", int32(8080)
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			discoveryv1.LabelServiceName: service, discoveryv1.LabelManagedBy: "drainkit-test"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port}},
		Endpoints:   eps,
	}
}

func endpoint(addr, zone string, ready, serving, terminating bool) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{addr}, Zone: &zone,
		Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating},
		Hints:      &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: zone}}}}
}

func createService(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	ctx := context.Background()
	_, err := client.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 8080}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func apply(t *testing.T, client kubernetes.Interface, s *discoveryv1.EndpointSlice) {
	t.Helper()
	api := client.DiscoveryV1().EndpointSlices(ns)
	cur, err := api.Get(context.Background(), s.Name, metav1.GetOptions{})
	if err == nil {
		s.ResourceVersion = cur.ResourceVersion
		_, err = api.Update(context.Background(), s, metav1.UpdateOptions{})
	} else {
		_, err = api.Create(context.Background(), s, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

func deleteSlice(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	if err := client.DiscoveryV1().EndpointSlices(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Two slices of one Service, one address in both: one instance each,
// ready ones only while one is ready, the serving terminating ones when
// none is (marked), zones from the hints, revisions growing.
func testTwoSlices(t *testing.T, client kubernetes.Interface) {
	createService(t, client, "manual")
	apply(t, client, slice("manual-a", "manual",
		endpoint("10.200.1.201", "zone-a", true, true, false),
		endpoint("10.200.1.202", "zone-a", true, true, false)))
	apply(t, client, slice("manual-b", "manual",
		endpoint("10.200.1.202", "zone-a", true, true, false),
		endpoint("10.200.1.203", "zone-b", true, true, false)))
	v := watch(t, client, "manual", dkube.WatchOptions{})
	first := v.await(t, "both slices merged", idsAre("10.200.1.201", "10.200.1.202", "10.200.1.203"))
	if first.Source != dkube.SourceName || first.Revision == 0 || first.Instances[2].Meta[dkube.MetaZone] != "zone-b" ||
		first.Instances[0].Port != 8080 || first.Instances[0].Endpoints[0].Scheme != "http" {
		t.Fatalf("first view: %s (source %q)", describe(first), first.Source)
	}

	// .203 terminating but serving: out while others are ready.
	apply(t, client, slice("manual-b", "manual",
		endpoint("10.200.1.202", "zone-a", true, true, false),
		endpoint("10.200.1.203", "zone-b", false, true, true)))
	v.await(t, "terminating endpoint left out", idsAre("10.200.1.201", "10.200.1.202"))

	// Nothing ready anywhere: the serving terminating endpoints carry the
	// traffic (KEP-1669); .202 is not serving in one of its copies, but the
	// other copy (slice manual-b, still ready there) wins as not terminating.
	apply(t, client, slice("manual-a", "manual",
		endpoint("10.200.1.201", "zone-a", false, true, true),
		endpoint("10.200.1.202", "zone-a", false, false, true)))
	apply(t, client, slice("manual-b", "manual",
		endpoint("10.200.1.203", "zone-b", false, true, true)))
	fb := v.await(t, "fallback to serving terminating endpoints", idsAre("10.200.1.201", "10.200.1.203"))
	for _, in := range fb.Instances {
		if in.Meta[dkube.MetaTerminating] != "true" {
			t.Fatalf("fallback view: %s, want every instance marked terminating", describe(fb))
		}
	}

	deleteSlice(t, client, "manual-b")
	last := v.await(t, "a deleted slice's endpoints gone", idsAre("10.200.1.201"))
	if last.Revision <= first.Revision || last.Epoch != 0 {
		t.Fatalf("last view %s after first %s: want a higher revision in epoch 0", describe(last), describe(first))
	}
	v.checkOrder(t)
}

// errGate is what the gate's dialer answers while closed: not "connection
// refused", which client-go's reflector retries as a watch; any other
// failure makes it list again.
var errGate = errors.New("clustertest: gate closed")

// gate is a dialer whose connections the test can cut.
type gate struct {
	dial   func(context.Context, string, string) (net.Conn, error)
	mu     sync.Mutex
	closed bool
	conns  []net.Conn
}

func (g *gate) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed {
		return nil, errGate
	}
	conn, err := g.dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		conn.Close()
		return nil, errGate
	}
	g.conns = append(g.conns, conn)
	return conn, nil
}

// cut closes every connection and refuses new ones until open.
func (g *gate) cut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	for _, c := range g.conns {
		c.Close()
	}
	g.conns = nil
}

func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = false
}

// A watch cut off from the API server: the last good view with Err, then,
// once it answers again, the relist's view, which no longer has a slice
// deleted meanwhile (no watch event told of it) and has one created.
func testRelist(t *testing.T, c *kubetest.Cluster, admin kubernetes.Interface) {
	createService(t, admin, "relist")
	apply(t, admin, slice("relist-a", "relist", endpoint("10.200.1.211", "zone-a", true, true, false)))
	apply(t, admin, slice("relist-b", "relist", endpoint("10.200.1.212", "zone-a", true, true, false)))
	g := &gate{dial: c.DialContext}
	v := watch(t, newClient(t, c, g.DialContext), "relist", dkube.WatchOptions{MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second})
	before := v.await(t, "both slices", idsAre("10.200.1.211", "10.200.1.212"))

	g.cut()
	failed := v.await(t, "an error view", func(v registry.View) bool { return v.Err != nil })
	if !slices.Equal(ids(failed), ids(before)) || failed.Revision != before.Revision {
		t.Fatalf("error view %s: want the last good view %s with Err", describe(failed), describe(before))
	}
	deleteSlice(t, admin, "relist-b")
	apply(t, admin, slice("relist-c", "relist", endpoint("10.200.1.213", "zone-a", true, true, false)))
	g.open()
	after := v.await(t, "the relist's view", idsAre("10.200.1.211", "10.200.1.213"))
	if after.Revision <= before.Revision || after.Epoch != 0 {
		t.Fatalf("view after the relist %s, before %s: want a higher revision in epoch 0", describe(after), describe(before))
	}
	v.checkOrder(t)
}

// helloImage is internal/kubetest's test image (testdata/hello): "serve
// ADDR" answers "hello from <its IP>" until SIGTERM.
const helloImage = "drainkit.invalid/hello:slices"

// webManifest is a Deployment of hello behind a headless Service whose
// port is named "http". Each pod's preStop hook sleeps 10s, during which
// it keeps serving and passing its readiness probe: terminating, serving,
// not ready.
const webManifest = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 30
      containers:
      - name: hello
        image: ` + helloImage + `
        imagePullPolicy: Never
        args: [serve, ":8080"]
        ports: [{name: http, containerPort: 8080}]
        readinessProbe:
          httpGet: {path: /, port: 8080}
          periodSeconds: 1
        lifecycle:
          preStop:
            sleep: {seconds: 10}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  clusterIP: None
  selector: {app: web}
  ports: [{name: http, port: 8080, targetPort: http}]
`

// Pods behind a headless Service, through a consumer.Watcher and a
// consumer.Transport fed by the source: scaled up and down, a pod
// terminating while others are ready (left out), every pod terminating
// (the fallback keeps requests answered), zones from the node's label.
func testPods(t *testing.T, c *kubetest.Cluster, admin kubernetes.Interface) {
	ctx := context.Background()
	kubectl := func(stdin string, args ...string) string {
		t.Helper()
		return c.MustKubectl(t, ctx, stdin, args...)
	}
	importBinary(t, c, "../../../../internal/kubetest", "./testdata/hello", "off", helloImage)
	// The EndpointSlice controller copies the node's zone into each endpoint.
	kubectl("", "label", "node", kubetest.NodeName, "topology.kubernetes.io/zone=zone-a")
	kubectl(webManifest, "apply", "-f", "-")

	lg, _ := testlog.New(t, "consumer log")
	w, err := consumer.NewWatcher(consumer.WatcherOptions{Service: "web", Logger: lg,
		Source: dkube.NewSource(admin, ns, "web", dkube.WatchOptions{Logger: lg})})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tr, err := consumer.NewTransport(w, "web", consumer.Options{Logger: lg, Base: &http.Transport{DialContext: c.DialContext}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	// get sends one request through the consumer and returns the pod IP
	// that answered.
	get := func() (string, error) {
		resp, err := client.Get("http://web/")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("%s: %s", resp.Status, body)
		}
		return strings.TrimSpace(strings.TrimPrefix(string(body), "hello from ")), nil
	}
	awaitView := func(what string, cond func(registry.View) bool) registry.View {
		t.Helper()
		var got registry.View
		testpoll.Eventually(t, waitFor, what, func() (bool, string) {
			got = w.View()
			return cond(got), describe(got)
		})
		return got
	}
	count := func(n int) func(registry.View) bool {
		return func(v registry.View) bool { return v.Err == nil && len(v.Instances) == n }
	}

	v := awaitView("two pods", count(2))
	for _, in := range v.Instances {
		if !strings.HasPrefix(in.Meta[dkube.MetaPod], "web-") || in.Meta[dkube.MetaZone] != "zone-a" || in.Meta[dkube.MetaNode] != kubetest.NodeName {
			t.Fatalf("view %s: want pods web-*, zone zone-a, node %s", describe(v), kubetest.NodeName)
		}
	}
	for range 4 {
		ip, err := get()
		if err != nil || !v.Has(ip) {
			t.Fatalf("request through the consumer: %q, %v; want a pod of %s", ip, err, describe(v))
		}
	}

	kubectl("", "scale", "deployment/web", "--replicas=3")
	v = awaitView("scaled up to three pods", count(3))

	// One pod terminating (its preStop sleep): left out at once, although
	// its slice entry is still serving, while the others are ready.
	victim := v.Instances[0]
	kubectl("", "delete", "pod", victim.Meta[dkube.MetaPod], "--wait=false")
	awaitView("the terminating pod left out", func(v registry.View) bool { return v.Err == nil && !v.Has(victim.ID) })
	if !terminatingServing(t, admin, "web", victim.ID) {
		t.Logf("the deleted pod %s was gone from the slices before it could be seen serving while terminating", victim.ID)
	}
	v = awaitView("its replacement in", func(v registry.View) bool { return count(3)(v) && !v.Has(victim.ID) })

	// Every pod terminating: the serving terminating ones are the view,
	// and requests are still answered (KEP-1669).
	kubectl("", "scale", "deployment/web", "--replicas=0")
	fb := awaitView("fallback to the terminating pods", func(v registry.View) bool {
		return v.Err == nil && len(v.Instances) > 0 && !slices.ContainsFunc(v.Instances, func(in registry.Instance) bool {
			return in.Meta[dkube.MetaTerminating] != "true"
		})
	})
	if ip, err := get(); err != nil || !fb.Has(ip) {
		t.Fatalf("request while every pod terminates: %q, %v; want a pod of %s", ip, err, describe(fb))
	}
	kubectl("", "scale", "deployment/web", "--replicas=2")
	awaitView("two new pods", func(v registry.View) bool {
		return count(2)(v) && !slices.ContainsFunc(v.Instances, func(in registry.Instance) bool { return fb.Has(in.ID) })
	})
	if st := w.Status(); st.FullReadRepairs != 0 {
		t.Fatalf("full reads repaired the watch %d times", st.FullReadRepairs)
	}
}

// terminatingServing reports whether a slice of service lists addr as
// terminating and serving, not ready (read once from the API server).
func terminatingServing(t *testing.T, client kubernetes.Interface, service, addr string) bool {
	t.Helper()
	list, err := client.DiscoveryV1().EndpointSlices(ns).List(context.Background(),
		metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + service})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Items {
		for _, ep := range s.Endpoints {
			c := ep.Conditions
			if slices.Contains(ep.Addresses, addr) && c.Terminating != nil && *c.Terminating && c.Serving != nil && *c.Serving && c.Ready != nil && !*c.Ready {
				return true
			}
		}
	}
	return false
}
