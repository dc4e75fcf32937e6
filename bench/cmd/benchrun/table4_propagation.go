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
	var agent *consulAgent
	if bin := consulBinary(); bin != "" {
		a, err := startConsul(bin)
		if err != nil {
			return nil, err
		}
		defer a.stop()
		agent = a
	}
	lat := map[string]Sample{}
	for i := range trials {
		got, err := propagationTrial(agent, i)
		if err != nil {
			return nil, fmt.Errorf("trial %d: %w", i+1, err)
		}
		for k, v := range got {
			lat[k] = append(lat[k], v)
		}
	}
	addPropagationRows(e, t, lat, agent != nil)
	t.Note("Each trial starts a fresh in-process instance (lifecycle, probes, grpcdrain, Consul registrar), waits until every observer sees it in rotation (and 250 ms more, so that the just-started Consul watch sits in its blocking query like a long-lived one), then calls Lifecycle.Drain; a figure is the time from that call to the observer's first sight of the instance leaving.")
	t.Note("/readyz is polled back to back on one keep-alive connection; the health client holds a Watch stream; the Consul watch is registry/consul.Watch (blocking queries).")
	t.Note("Targets: /readyz p50 < 1 ms, health p50 < 5 ms, registries p99 < 100 ms.")
	return t, nil
}

func addPropagationRows(e *env, t *Table, lat map[string]Sample, consul bool) {
	rows := []struct {
		name, target string
		ok           func(Sample) bool
	}{
		{obsReadyz, "p50 < 1 ms", func(s Sample) bool { return s.Median() < 1 }},
		{obsHealth, "p50 < 5 ms", func(s Sample) bool { return s.Median() < 5 }},
		{obsConsul, "p99 < 100 ms", func(s Sample) bool { return s.Quantile(0.99) < 100 }},
	}
	for _, r := range rows {
		s := lat[r.name]
		if r.name == obsConsul && !consul {
			t.Add(e.quick, r.target, "not available", r.name, "-", "-", "no Consul agent binary ($DRAINKIT_CONSUL_BIN; make bench sets it)", "0")
			continue
		}
		t.Add(e.quick, r.target, verdict(len(s) > 0 && r.ok(s)), r.name,
			fmt.Sprintf("%.3f", s.Median()), fmt.Sprintf("%.3f", s.Quantile(0.99)), fmt.Sprintf("%.3f..%.3f", s.Min(), s.Max()), fmt.Sprint(len(s)))
	}
	t.Add(e.quick, "p99 < 100 ms", "not available", obsEtcd, "-", "-", "drainkit's etcd registrar is not in this tree yet", "0")
}

// steadyWatch is how long a trial waits after the Consul watch first
// listed the instance.
const steadyWatch = 250 * time.Millisecond

// propagationTrial runs one trial and returns each observer's latency in ms.
func propagationTrial(agent *consulAgent, n int) (map[string]float64, error) {
	p, err := startPropInstance(agent, n)
	if err != nil {
		return nil, err
	}
	defer p.close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	obs := []*observer{newObserver(obsReadyz), newObserver(obsHealth)}
	go watchReadyz(ctx, p.adminURL, obs[0])
	go watchHealth(ctx, p.grpcAddr, obs[1])
	if agent != nil {
		obs = append(obs, newObserver(obsConsul))
		go watchConsul(ctx, agent, p.service, p.grpcPort, obs[2])
	}
	for _, o := range obs {
		select {
		case <-o.armed:
		case <-time.After(15 * time.Second):
			return nil, fmt.Errorf("%s: never saw the instance in rotation", o.name)
		}
	}
	if agent != nil {
		// A just-started registry/consul.Watch spaces queries that answered
		// at once at least 100ms apart: let it reach its steady blocking
		// query, where a long-lived consumer's watch would be.
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
