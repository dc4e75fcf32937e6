package main

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Observers of table 4, in order.
const (
	obsReadyz = "GET /readyz answers 503"
	obsHealth = "grpc.health.v1 Watch sees NOT_SERVING"
	obsConsul = "Consul watch (real agent) sees the instance gone"
	obsEtcd   = "etcd watch (real server) sees the instance gone"
)

// tablePropagation is table 4: from the drain's start (Lifecycle.Drain)
// to each kind of consumer seeing the instance leave, over repeated trials.
func tablePropagation(e *env) (*Table, error) {
	trials := 20
	if e.quick {
		trials = 5
	}
	t := &Table{Num: 4, Title: "Ejection propagation: drain start to consumers seeing the instance leave",
		Command: "go run ./bench/cmd/benchrun -only 4",
		Header:  []string{"observer", "p50 ms", "p99 ms", "min..max ms", "trials"}}
	regs, err := startRegistries()
	if err != nil {
		return nil, err
	}
	defer regs.stop()
	lat := map[string]Sample{}
	for i := range trials {
		got, err := propagationTrial(regs, i)
		if err != nil {
			return nil, fmt.Errorf("trial %d: %w", i+1, err)
		}
		for k, v := range got {
			lat[k] = append(lat[k], v)
		}
	}
	addPropagationRows(e, t, lat, regs)
	t.Note("Each trial starts a fresh in-process instance (lifecycle, probes, grpcdrain, Consul and etcd registrars), waits until every observer sees it in rotation (and 250 ms more, so that the just-started registry watches sit in their blocking query or watch stream like long-lived ones), then calls Lifecycle.Drain; a figure is the time from that call to the observer's first sight of the instance leaving.")
	t.Note("/readyz is polled back to back on one keep-alive connection; the health client holds a Watch stream; the Consul watch is registry/consul.Watch (blocking queries) on a -dev agent; the etcd watch is registry/etcd.Watch (one Get, then an etcd watch) on a one-member etcd 3.7.3 server started for the table (temporary data directory, --unsafe-no-fsync like the in-memory -dev agent). The registrars deregister concurrently: Consul's deregistration call, etcd's lease revocation.")
	t.Note("Targets: /readyz p50 < 1 ms, health p50 < 5 ms, registries p99 < 100 ms.")
	return t, nil
}

// startRegistries starts a Consul agent and an etcd server for the table,
// each only if its binary is found.
func startRegistries() (registries, error) {
	var regs registries
	if bin := consulBinary(); bin != "" {
		a, err := startConsul(bin)
		if err != nil {
			return regs, err
		}
		regs.consul = a
	}
	if bin := etcdBinary(); bin != "" {
		s, err := startEtcd(bin)
		if err != nil {
			regs.stop()
			return regs, err
		}
		regs.etcd = s
	}
	return regs, nil
}

func (r registries) stop() {
	if r.consul != nil {
		r.consul.stop()
	}
	if r.etcd != nil {
		r.etcd.stop()
	}
}

func addPropagationRows(e *env, t *Table, lat map[string]Sample, regs registries) {
	rows := []struct {
		name, target, missing string // missing: why the row cannot be measured, "" if it can
		ok                    func(Sample) bool
	}{
		{obsReadyz, "p50 < 1 ms", "", func(s Sample) bool { return s.Median() < 1 }},
		{obsHealth, "p50 < 5 ms", "", func(s Sample) bool { return s.Median() < 5 }},
		{obsConsul, "p99 < 100 ms", unless(regs.consul != nil, "no Consul agent binary ($DRAINKIT_CONSUL_BIN; make bench sets it)"), p99Under100},
		{obsEtcd, "p99 < 100 ms", unless(regs.etcd != nil, "no etcd server binary ($DRAINKIT_ETCD_BIN; make bench sets it)"), p99Under100},
	}
	for _, r := range rows {
		if r.missing != "" {
			t.Add(e.quick, r.target, "not available", r.name, "-", "-", r.missing, "0")
			continue
		}
		s := lat[r.name]
		t.Add(e.quick, r.target, verdict(len(s) > 0 && r.ok(s)), r.name,
			fmt.Sprintf("%.3f", s.Median()), fmt.Sprintf("%.3f", s.Quantile(0.99)), fmt.Sprintf("%.3f..%.3f", s.Min(), s.Max()), fmt.Sprint(len(s)))
	}
}

func p99Under100(s Sample) bool { return s.Quantile(0.99) < 100 }

// unless returns reason when have is false, else "".
func unless(have bool, reason string) string {
	if have {
		return ""
	}
	return reason
}

// steadyWatch is how long a trial waits after the registry watches first
// listed the instance.
const steadyWatch = 250 * time.Millisecond

// propagationTrial runs one trial and returns each observer's latency in ms.
func propagationTrial(regs registries, n int) (map[string]float64, error) {
	p, err := startPropInstance(regs, n)
	if err != nil {
		return nil, err
	}
	defer p.close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	obs := []*observer{newObserver(obsReadyz), newObserver(obsHealth)}
	go watchReadyz(ctx, p.adminURL, obs[0])
	go watchHealth(ctx, p.grpcAddr, obs[1])
	if regs.consul != nil {
		o := newObserver(obsConsul)
		obs = append(obs, o)
		go watchConsul(ctx, regs.consul, p.service, p.grpcPort, o)
	}
	if regs.etcd != nil {
		o := newObserver(obsEtcd)
		obs = append(obs, o)
		go watchEtcd(ctx, regs.etcd, p.service, p.grpcPort, o)
	}
	for _, o := range obs {
		select {
		case <-o.armed:
		case <-time.After(15 * time.Second):
			return nil, fmt.Errorf("%s: never saw the instance in rotation", o.name)
		}
	}
	if regs.any() {
		// A just-started registry/consul.Watch spaces queries that answered
		// at once at least 100ms apart, and registry/etcd.Watch delivers its
		// first view before its watch stream is open: let both reach their
		// steady state, where a long-lived consumer's watch would be.
		time.Sleep(steadyWatch)
	}
	t0 := time.Now()
	if err := p.lc.Drain("bench"); err != nil {
		return nil, err
	}
	got := map[string]float64{}
	for _, o := range obs {
		select {
		case at := <-o.seen:
			got[o.name] = float64(at.Sub(t0).Microseconds()) / 1000
		case <-time.After(10 * time.Second):
			return nil, fmt.Errorf("%s: %w within 10s of the drain's start", o.name, errNotSeen)
		}
	}
	cancel()
	if err := <-p.runErr; err != nil {
		fmt.Fprintf(os.Stderr, "benchrun: trial %d: lifecycle: %v\n", n+1, err)
	}
	return got, nil
}
