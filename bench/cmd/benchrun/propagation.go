package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/hashicorp/consul/api"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/drainkit/drainkit/grpcdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/probes"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/consul"
	"github.com/drainkit/drainkit/registry/etcd"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// propInstance is one drainkit instance of a propagation trial: a lifecycle
// with the probes on an admin listener, a grpcdrain server (grpc-go's
// health service) and a registrar in each registry server of the table
// (Consul, etcd).
type propInstance struct {
	lc       *lifecycle.Lifecycle
	adminURL string
	grpcAddr string
	grpcPort int
	service  string
	runErr   chan error
	cleanup  []func()
}

var discard = slog.New(slog.DiscardHandler)

// propTimings drain fast: the trial measures the drain's first steps.
func propTimings() budget.Timings {
	t := budget.DefaultTimings()
	t.PropagationMin, t.PropagationQuiet, t.PropagationMax = 300*time.Millisecond, 0, 300*time.Millisecond
	t.DrainTimeout, t.StopTimeout = time.Second, time.Second
	return t
}

// registries are the real registry servers of table 4; nil when no binary
// was found.
type registries struct {
	consul *consulAgent
	etcd   *etcdServer
}

func (r registries) any() bool { return r.consul != nil || r.etcd != nil }

func startPropInstance(regs registries, trial int) (*propInstance, error) {
	lc, err := lifecycle.New(lifecycle.Options{Logger: discard, Signals: []os.Signal{}, Timings: propTimings()})
	if err != nil {
		return nil, err
	}
	p := &propInstance{lc: lc, runErr: make(chan error, 1), service: fmt.Sprintf("drainkit-bench-%d", trial)}
	ph, err := probes.New(lc, probes.Options{Logger: discard})
	if err != nil {
		return nil, err
	}
	adminLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	adminSrv := &http.Server{Handler: ph, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = adminSrv.Serve(adminLn) }()
	p.cleanup = append(p.cleanup, func() { _ = adminSrv.Close(); ph.Close() })
	p.adminURL = "http://" + adminLn.Addr().String() + "/readyz"
	grpcLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		p.close()
		return nil, err
	}
	p.grpcAddr, p.grpcPort = grpcLn.Addr().String(), grpcLn.Addr().(*net.TCPAddr).Port
	lc.AddServer("grpc", grpcdrain.New(lc, grpcLn, nil))
	if err := p.addRegistrars(regs); err != nil {
		p.close()
		return nil, err
	}
	go func() { p.runErr <- lc.Run(context.Background()) }()
	return p, p.waitReady(10 * time.Second)
}

// addRegistrars registers the instance's gRPC port in every registry server
// of regs.
func (p *propInstance) addRegistrars(regs registries) error {
	if regs.consul != nil {
		o := consul.DefaultOptions(p.service, p.grpcPort)
		o.Address, o.Consul, o.Logger = "127.0.0.1", &api.Config{Address: regs.consul.HTTPAddr}, discard
		reg, err := consul.New(o)
		if err != nil {
			return err
		}
		p.lc.AddRegistrar("consul", reg)
	}
	if regs.etcd != nil {
		o := etcd.DefaultOptions(p.service, p.grpcPort)
		o.Address, o.Client, o.Logger = "127.0.0.1", regs.etcd.clientConfig(), discard
		reg, err := etcd.New(o)
		if err != nil {
			return err
		}
		p.cleanup = append(p.cleanup, func() { _ = reg.Close() })
		p.lc.AddRegistrar("etcd", reg)
	}
	return nil
}

func (p *propInstance) waitReady(timeout time.Duration) error {
	sub, unsubscribe := p.lc.Subscribe()
	defer unsubscribe()
	deadline := time.After(timeout)
	for p.lc.State() != lifecycle.Ready {
		select {
		case <-sub:
		case err := <-p.runErr:
			return fmt.Errorf("lifecycle ended before READY: %v", err)
		case <-deadline:
			return fmt.Errorf("not READY within %s", timeout)
		}
	}
	return nil
}

func (p *propInstance) close() {
	for i := len(p.cleanup) - 1; i >= 0; i-- {
		p.cleanup[i]()
	}
}

// observer is one way a consumer learns of the drain: armed is closed once
// it saw the instance in rotation, seen receives when it saw it leave.
type observer struct {
	name  string
	armed chan struct{}
	seen  chan time.Time
}

func newObserver(name string) *observer {
	return &observer{name: name, armed: make(chan struct{}), seen: make(chan time.Time, 1)}
}

// watchReadyz polls GET /readyz back to back on one keep-alive connection.
func watchReadyz(ctx context.Context, url string, o *observer) {
	client := &http.Client{Timeout: 2 * time.Second}
	defer client.CloseIdleConnections()
	armed := false
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK && !armed:
			armed = true
			close(o.armed)
		case resp.StatusCode == http.StatusServiceUnavailable && armed:
			o.seen <- time.Now()
			return
		}
	}
}

// watchHealth follows grpc.health.v1 Watch for the whole server ("").
func watchHealth(ctx context.Context, addr string, o *observer) {
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return
	}
	defer cc.Close()
	stream, err := healthpb.NewHealthClient(cc).Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return
	}
	armed := false
	for {
		r, err := stream.Recv()
		if err != nil {
			return
		}
		switch {
		case r.Status == healthpb.HealthCheckResponse_SERVING && !armed:
			armed = true
			close(o.armed)
		case r.Status != healthpb.HealthCheckResponse_SERVING && armed:
			o.seen <- time.Now()
			return
		}
	}
}

// watchConsul follows the service's passing instances with blocking
// queries (registry/consul.Watch) until the instance is gone.
func watchConsul(ctx context.Context, agent *consulAgent, service string, port int, o *observer) {
	client, err := api.NewClient(&api.Config{Address: agent.HTTPAddr})
	if err != nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	_ = consul.Watch(ctx, client, service, consul.WatchOptions{}, untilGone(port, o, cancel))
}

// untilGone returns a watch callback that arms o once a view lists the
// instance on port, then reports the first view without it and calls done.
// Views with Err set (the last good view, re-sent) are ignored.
func untilGone(port int, o *observer, done func()) func(registry.View) {
	armed := false
	return func(v registry.View) {
		listed := false
		for _, in := range v.Instances {
			listed = listed || in.Port == port
		}
		switch {
		case v.Err == nil && listed && !armed:
			armed = true
			close(o.armed)
		case v.Err == nil && !listed && armed:
			o.seen <- time.Now()
			done()
		}
	}
}

// watchEtcd follows the service's instances with registry/etcd.Watch (one
// Get, then an etcd watch from the next revision) until the instance is
// gone.
func watchEtcd(ctx context.Context, srv *etcdServer, service string, port int, o *observer) {
	client, err := clientv3.New(srv.clientConfig())
	if err != nil {
		return
	}
	defer client.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	_ = etcd.Watch(ctx, client, service, etcd.WatchOptions{}, untilGone(port, o, cancel))
}

var errNotSeen = errors.New("not seen")
