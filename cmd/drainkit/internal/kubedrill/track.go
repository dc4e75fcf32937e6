package kubedrill

import (
	"encoding/json"
	"sync"
	"time"
)

// podTrack is what the drill saw of one service pod, each instant on the
// drill's clock (zero: not seen).
type podTrack struct {
	name, strategy, ip string
	// deleted is when the pod got its deletionTimestamp: the kubelet's
	// termination starts (the preStop hook, or SIGTERM without one).
	deleted time.Time
	// sigterm is when the service process logged SIGTERM.
	sigterm time.Time
	// notReady, notServing and terminating are the first EndpointSlice
	// conditions ready=false, serving=false and terminating=true after the
	// endpoint was ready; removed when it left every slice.
	notReady, notServing, terminating, removed time.Time
	// rulesGone is the first read of kube-proxy's rules without the pod's
	// IP in its Service's chain, after it had been there.
	rulesGone time.Time
	// done is when the service process logged its last line: its drain
	// is over and it exits (the process's clock, without the kubelet's
	// delay in reporting it).
	done time.Time
	// exited is when its container was seen terminated (or the pod
	// deleted, if that came first).
	exited time.Time

	wasReady, wasServing, inSlice, inRules bool
}

// tracker folds the watches, the logs and kube-proxy's rules into a
// podTrack per service pod. Safe for concurrent use.
type tracker struct {
	mu      sync.Mutex
	pods    map[string]*podTrack            // by pod name
	slices  map[string]map[string]sliceEndp // by slice name: its endpoints by pod name
	changed *changes
}

// sliceEndp is one endpoint's conditions in a slice.
type sliceEndp struct {
	ready, serving, terminating bool
}

func newTracker() *tracker {
	return &tracker{pods: map[string]*podTrack{}, slices: map[string]map[string]sliceEndp{}, changed: newChanges()}
}

// pod returns the track of name, making it.
func (t *tracker) pod(name string) *podTrack {
	p := t.pods[name]
	if p == nil {
		p = &podTrack{name: name}
		t.pods[name] = p
	}
	return p
}

// podObject is the part of a Pod the drill reads.
type podObject struct {
	Metadata struct {
		Name              string            `json:"name"`
		Labels            map[string]string `json:"labels"`
		DeletionTimestamp *string           `json:"deletionTimestamp"`
	} `json:"metadata"`
	Status struct {
		PodIP             string `json:"podIP"`
		ContainerStatuses []struct {
			State struct {
				Terminated *json.RawMessage `json:"terminated"`
			} `json:"state"`
		} `json:"containerStatuses"`
	} `json:"status"`
}

// onPod folds a watch event of a pod.
func (t *tracker) onPod(at time.Time, ev watchEvent) {
	var o podObject
	if json.Unmarshal(ev.Object, &o) != nil || o.Metadata.Labels[labelRole] != "server" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	defer t.changed.Notify()
	p := t.pod(o.Metadata.Name)
	p.strategy = o.Metadata.Labels[labelStrategy]
	if o.Status.PodIP != "" {
		p.ip = o.Status.PodIP
	}
	if o.Metadata.DeletionTimestamp != nil && p.deleted.IsZero() {
		p.deleted = at
	}
	for _, cs := range o.Status.ContainerStatuses {
		if cs.State.Terminated != nil && p.exited.IsZero() && !p.deleted.IsZero() {
			p.exited = at
		}
	}
	if ev.Type == "DELETED" {
		if p.deleted.IsZero() {
			p.deleted = at
		}
		if p.exited.IsZero() {
			p.exited = at
		}
	}
}

// sliceObject is the part of an EndpointSlice the drill reads.
type sliceObject struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Endpoints []struct {
		Conditions struct {
			Ready       *bool `json:"ready"`
			Serving     *bool `json:"serving"`
			Terminating *bool `json:"terminating"`
		} `json:"conditions"`
		TargetRef *struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"targetRef"`
	} `json:"endpoints"`
}

// onSlice folds a watch event of an EndpointSlice. A condition the API
// leaves out has its documented meaning: ready and serving unknown count
// as true, terminating unknown as false.
func (t *tracker) onSlice(at time.Time, ev watchEvent) {
	var o sliceObject
	if json.Unmarshal(ev.Object, &o) != nil {
		return
	}
	endps := map[string]sliceEndp{}
	if ev.Type != "DELETED" {
		for _, e := range o.Endpoints {
			if e.TargetRef == nil || e.TargetRef.Kind != "Pod" {
				continue
			}
			c := e.Conditions
			endps[e.TargetRef.Name] = sliceEndp{
				ready:       c.Ready == nil || *c.Ready,
				serving:     c.Serving == nil || *c.Serving,
				terminating: c.Terminating != nil && *c.Terminating,
			}
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	defer t.changed.Notify()
	old := t.slices[o.Metadata.Name]
	if ev.Type == "DELETED" {
		delete(t.slices, o.Metadata.Name)
	} else {
		t.slices[o.Metadata.Name] = endps
	}
	for name, e := range endps {
		p := t.pod(name)
		p.inSlice = true
		switch {
		case e.ready:
			p.wasReady = true
		case p.wasReady && p.notReady.IsZero():
			p.notReady = at
		}
		switch {
		case e.serving:
			p.wasServing = true
		case p.wasServing && p.notServing.IsZero():
			p.notServing = at
		}
		if e.terminating && p.terminating.IsZero() {
			p.terminating = at
		}
	}
	// A pod that left this slice has left the Service unless another
	// slice lists it (the API may move an endpoint between slices).
	for name := range old {
		if _, ok := endps[name]; ok {
			continue
		}
		p := t.pod(name)
		if !t.inAnySlice(name) && p.inSlice && p.removed.IsZero() {
			p.inSlice = false
			p.removed = at
		}
	}
}

func (t *tracker) inAnySlice(pod string) bool {
	for _, s := range t.slices {
		if _, ok := s[pod]; ok {
			return true
		}
	}
	return false
}

// onRules folds one read of kube-proxy's rules: the destination IPs of
// each Service (by "namespace/name:port").
func (t *tracker) onRules(at time.Time, namespace string, dests map[string]map[string]bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	defer t.changed.Notify()
	for _, p := range t.pods {
		if p.ip == "" || p.strategy == "" {
			continue
		}
		in := dests[namespace+"/"+deploymentName(p.strategy)+":http"][p.ip]
		switch {
		case in:
			p.inRules = true
		case p.inRules && p.rulesGone.IsZero():
			p.rulesGone = at
		}
	}
}

// onLog records a service process's log line of pod that marks mark
// (podLogLine).
func (t *tracker) onLog(pod string, mark int, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	defer t.changed.Notify()
	p := t.pod(pod)
	switch {
	case mark == logSIGTERM && p.sigterm.IsZero():
		p.sigterm = at
	case mark == logDone && p.done.IsZero():
		p.done = at
	}
}

// snapshot returns a copy of every pod's track.
func (t *tracker) snapshot() map[string]podTrack {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]podTrack, len(t.pods))
	for n, p := range t.pods {
		out[n] = *p
	}
	return out
}
