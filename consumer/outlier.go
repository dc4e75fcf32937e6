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

// failed records a connect-level failure of ep; it may eject ep, at once
// when wrong (the address answered as another service).
func (t *Transport) failed(ep *endpoint, probe, wrong bool) {
	if probe {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.refused > 0 { // the whole service fails: no evidence against ep alone
			t.ejectLocked(ep, "its half-open probe failed during a whole-service outage (panic mode); ejected until the outage ends", true)
			return
		}
		t.ejectLocked(ep, "its half-open probe failed", false)
		return
	}
	if t.opts.Outlier.Consecutive < 0 {
		return
	}
	if wrong {
		ep.fails.Store(int32(t.opts.Outlier.Consecutive))
	} else if int(ep.fails.Add(1)) < t.opts.Outlier.Consecutive {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if ep.state.Load() != stateHealthy || t.byID[ep.id] != ep {
		return
	}
	set := t.set.Load()
	ejected, n := 0, 0
	for _, e := range set.eps {
		if set.zones != nil && e.zone != ep.zone { // the cap counts per zone
			continue
		}
		n++
		if e.state.Load() != stateHealthy {
			ejected++
		}
	}
	if ejected*100 >= n*t.opts.Outlier.MaxEjectionPercent { // Envoy's rule
		t.refuseLocked(ep, ejected, n)
		return
	}
	t.unrefuseLocked(ep)
	t.ejectLocked(ep, "consecutive connect-level failures", false)
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
// An outage ejection (its probe failed in panic mode, when every instance
// fails alike) keeps the count and ends with the outage (endOutageLocked).
func (t *Transport) ejectLocked(ep *endpoint, why string, outage bool) {
	o := t.opts.Outlier
	now := time.Now()
	if !ep.lastRestored.IsZero() && now.Sub(ep.lastRestored) > o.MaxEjectionTime {
		ep.ejections = 0
	}
	if !outage || ep.ejections == 0 {
		ep.ejections++
	}
	ep.outage = outage
	d := min(o.BaseEjectionTime*time.Duration(ep.ejections), o.MaxEjectionTime)
	ep.until.Store(int64(t.clock.at(now) + d)) // monotonic: an NTP step moves neither end
	ep.fails.Store(0)
	ep.state.Store(stateEjected)
	t.ejections.Add(1)
	t.tel.ejected(ep)
	t.log.Warn("consumer: instance ejected (local outlier ejection; the registry is not changed)",
		"service", t.service, "instance", ep.id, "addr", ep.addr, "zone", ep.zone, "reason", why,
		"for_ms", d.Milliseconds(), "ejections", ep.ejections)
}

// restore ends ep's ejection after a successful probe.
func (t *Transport) restore(ep *endpoint) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ep.fails.Store(0)
	ep.lastRestored = time.Now()
	ep.outage = false
	ep.state.Store(stateHealthy)
	t.log.Info("consumer: ejected instance restored by its half-open probe",
		"service", t.service, "instance", ep.id, "addr", ep.addr)
}

// refuseLocked notes that ep should be ejected but the cap forbids it: the
// Transport is in panic mode until no such instance is left.
func (t *Transport) refuseLocked(ep *endpoint, ejected, n int) {
	if ep.refused.Load() {
		return
	}
	ep.refused.Store(true)
	ep.until.Store(int64(t.clock.now() + t.opts.Outlier.BaseEjectionTime)) // its next probe, should its zone spill (refusedProbe)
	t.refused++
	if t.refused == 1 {
		t.panics.Add(1)
		t.tel.panicked(ep.zone)
		for _, e := range t.byID { // ejected before anyone could tell it was the whole service
			if e.state.Load() != stateHealthy {
				e.outage = true
			}
		}
		t.log.Error("consumer: panic mode: more instances fail than max ejection percent allows to eject; ejection stops",
			"service", t.service, "instance", ep.id, "addr", ep.addr, "zone", ep.zone, "ejected", ejected,
			"instances", n, "max_ejection_percent", t.opts.Outlier.MaxEjectionPercent)
	}
}

func (t *Transport) unrefuseLocked(ep *endpoint) {
	if !ep.refused.Load() {
		return
	}
	ep.refused.Store(false)
	t.refused--
	if t.refused == 0 {
		t.endOutageLocked()
	}
}

// endOutageLocked ends panic mode: an instance the cap kept in rotation
// answers again (or left the view). The ejections made during the outage
// end now, each with its half-open probe at the next pick, so an instance
// that is back does not stay out for an ejection time it earned while
// every instance failed alike.
func (t *Transport) endOutageLocked() {
	now := int64(t.clock.now())
	ended := 0
	for _, ep := range t.byID {
		if !ep.outage {
			continue
		}
		ep.outage = false
		if ep.state.Load() == stateEjected && ep.until.Load() > now {
			ep.until.Store(now)
			ended++
		}
	}
	t.log.Info("consumer: panic mode over; the outage's ejections end with it (each instance is probed at its next pick)",
		"service", t.service, "ejections_ended", ended)
}
