package consumer

import (
	"time"
)

// succeeded records an answer from ep (any HTTP status).
func (t *Transport) succeeded(ep *endpoint, probe bool) {
	if probe {
		t.restore(ep)
		return
	}
	if ep.fails.Load() == 0 {
		return
	}
	ep.fails.Store(0)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.unrefuseLocked(ep)
}

// failed records a connect-level failure of ep; it may eject ep.
func (t *Transport) failed(ep *endpoint, probe bool) {
	if probe {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.ejectLocked(ep, "its half-open probe failed")
		return
	}
	if t.opts.Outlier.Consecutive < 0 || int(ep.fails.Add(1)) < t.opts.Outlier.Consecutive {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if ep.state.Load() != stateHealthy || t.byID[ep.id] != ep {
		return
	}
	set := t.set.Load()
	ejected := 0
	for _, e := range set.eps {
		if e.state.Load() != stateHealthy {
			ejected++
		}
	}
	if ejected*100 >= len(set.eps)*t.opts.Outlier.MaxEjectionPercent { // Envoy's rule
		t.refuseLocked(ep, ejected, len(set.eps))
		return
	}
	t.unrefuseLocked(ep)
	t.ejectLocked(ep, "consecutive connect-level failures")
}

// abandoned ends a probe that neither succeeded nor failed (the caller gave
// up): the next pick probes again.
func (t *Transport) abandoned(ep *endpoint, probe bool) {
	if probe {
		ep.state.Store(stateEjected)
	}
}

// ejectLocked ejects ep for the base ejection time times its ejection
// count, capped at the maximum. A restoration long ago resets the count.
func (t *Transport) ejectLocked(ep *endpoint, why string) {
	o := t.opts.Outlier
	now := time.Now()
	if !ep.lastRestored.IsZero() && now.Sub(ep.lastRestored) > o.MaxEjectionTime {
		ep.ejections = 0
	}
	ep.ejections++
	d := min(o.BaseEjectionTime*time.Duration(ep.ejections), o.MaxEjectionTime)
	ep.until.Store(int64(t.clock.at(now) + d)) // monotonic: an NTP step moves neither end
	ep.fails.Store(0)
	ep.state.Store(stateEjected)
	t.ejections.Add(1)
	t.log.Warn("consumer: instance ejected (local outlier ejection; the registry is not changed)",
		"service", t.service, "instance", ep.id, "addr", ep.addr, "reason", why,
		"for", d, "ejections", ep.ejections)
}

// restore ends ep's ejection after a successful probe.
func (t *Transport) restore(ep *endpoint) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ep.fails.Store(0)
	ep.lastRestored = time.Now()
	ep.state.Store(stateHealthy)
	t.log.Info("consumer: ejected instance restored by its half-open probe",
		"service", t.service, "instance", ep.id, "addr", ep.addr)
}

// refuseLocked notes that ep should be ejected but the cap forbids it: the
// Transport is in panic mode until no such instance is left.
func (t *Transport) refuseLocked(ep *endpoint, ejected, n int) {
	if ep.refused {
		return
	}
	ep.refused = true
	t.refused++
	if t.refused == 1 {
		t.panics.Add(1)
		t.log.Error("consumer: panic mode: more instances fail than max ejection percent allows to eject; ejection stops",
			"service", t.service, "instance", ep.id, "addr", ep.addr, "ejected", ejected,
			"instances", n, "max_ejection_percent", t.opts.Outlier.MaxEjectionPercent)
	}
}

func (t *Transport) unrefuseLocked(ep *endpoint) {
	if !ep.refused {
		return
	}
	ep.refused = false
	t.refused--
	if t.refused == 0 {
		t.log.Info("consumer: panic mode over", "service", t.service)
	}
}
