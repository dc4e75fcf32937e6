package probes

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
)

// probeLine is one line of a ?verbose answer: "[+]name ok" or
// "[-]name failed: why".
type probeLine struct {
	name   string
	ok     bool
	detail string
}

func (p probeLine) String() string {
	if p.ok {
		return fmt.Sprintf("[+]%s ok%s", p.name, p.detail)
	}
	return fmt.Sprintf("[-]%s failed%s", p.name, p.detail)
}

// stateLine reports the lifecycle state and whether the probe passes in it.
func stateLine(st lifecycle.State, ok bool) probeLine {
	return probeLine{name: "state", ok: ok, detail: ": " + st.String()}
}

// startupz passes once warm-up succeeded, until STOPPED.
func (h *Handler) startupz(w http.ResponseWriter, r *http.Request) {
	st := h.lc.State()
	ok := st != lifecycle.Starting && st != lifecycle.Stopped
	writeProbe(w, r, "startupz", ok, []probeLine{stateLine(st, ok)})
}

// readyz passes in READY only. ?verbose lists the cached result of every
// readiness check (error texts only for callers the loopback-or-token rule
// accepts, as GET /state); a single failed round does not fail readyz
// (the lifecycle's thresholds decide).
func (h *Handler) readyz(w http.ResponseWriter, r *http.Request) {
	st := h.lc.State()
	ok := st == lifecycle.Ready
	lines := []probeLine{stateLine(st, ok)}
	if verbose(r) {
		checks := h.lc.Status().Checks
		if code, _ := h.auth.authorize(r); code != 0 {
			checks = redact(lifecycle.Status{Checks: checks}).Checks // as GET /state
		}
		for _, c := range checks {
			lines = append(lines, checkLine(c))
		}
	}
	writeProbe(w, r, "readyz", ok, lines)
}

// servingz is the readiness probe for Kubernetes (DESIGN.md section 2): as
// /readyz, except during a drain the kubelet started (the preStop hook's
// POST /drain?wait=propagation, or SIGTERM/SIGINT), where it passes until
// the listeners close, unless Options.ServingzFailsDraining. The pod is
// terminating then, so its EndpointSlice entry is not ready whatever the
// probe says, and a passing probe only keeps the "serving" condition that
// lets kube-proxy fall back to terminating endpoints when no endpoint is
// ready (KEP-1669): failing it would drop that traffic. A drain an
// operator started without the hook (POST /drain, Drain()) fails it at
// once, as /readyz: the pod is not terminating, and a passing probe would
// keep it ready in the Service.
func (h *Handler) servingz(w http.ResponseWriter, r *http.Request) {
	st := h.lc.State()
	ok := st == lifecycle.Ready
	lines := []probeLine{stateLine(st, ok)}
	if st == lifecycle.Draining && !h.opts.ServingzFailsDraining {
		status := h.lc.Status()
		kubelet := h.hookDrain.Load() || status.Cause == lifecycle.CauseSignal
		closed := false
		if status.Timeline != nil {
			_, closed = status.Timeline.Offset(lifecycle.StepListenersClosed)
		}
		ok = kubelet && !closed
		detail := ": terminating, listeners open: serving kube-proxy's fallback"
		switch {
		case !kubelet:
			detail = ": drain not started by the kubelet (no preStop hook call, no signal)"
		case closed:
			detail = ": listeners closed"
		}
		lines = []probeLine{stateLine(st, ok), {name: "draining", ok: ok, detail: detail}}
	}
	writeProbe(w, r, "servingz", ok, lines)
}

func checkLine(c lifecycle.CheckResult) probeLine {
	l := probeLine{name: "check " + c.Name, ok: c.OK}
	switch {
	case c.At.IsZero():
		l.detail = ": not run yet"
	case c.OK:
		l.detail = fmt.Sprintf(" (%s ago, took %s)", ageString(time.Since(c.At)), c.Duration.Round(time.Microsecond))
	default:
		l.detail = fmt.Sprintf(": %s (%s ago)", c.Err, ageString(time.Since(c.At)))
	}
	return l
}

// livez passes unless the lifecycle is STOPPED or the watchdog stopped
// ticking. It never depends on readiness checks or on DRAINING.
func (h *Handler) livez(w http.ResponseWriter, r *http.Request) {
	st := h.lc.State()
	stOK := st != lifecycle.Stopped
	wdOK, age := h.wd.healthy()
	wd := probeLine{name: "watchdog", ok: wdOK, detail: fmt.Sprintf(": last tick %s ago", ageString(age))}
	if !wdOK {
		wd.detail += fmt.Sprintf(", threshold %s", h.opts.WatchdogThreshold)
	}
	writeProbe(w, r, "livez", stOK && wdOK, []probeLine{stateLine(st, stOK), wd})
}

func ageString(d time.Duration) string { return d.Round(time.Millisecond).String() }

// verbose reports whether the query has a "verbose" key (?verbose or
// ?verbose=1).
func verbose(r *http.Request) bool {
	_, ok := r.URL.Query()["verbose"]
	return ok
}

// writeProbe answers 200 or 503 with a plain-text body: one line per check
// with ?verbose, then a summary line.
func writeProbe(w http.ResponseWriter, r *http.Request, name string, ok bool, lines []probeLine) {
	var b strings.Builder
	if verbose(r) {
		for _, l := range lines {
			b.WriteString(l.String())
			b.WriteByte('\n')
		}
	}
	code := http.StatusOK
	if ok {
		fmt.Fprintf(&b, "%s check passed\n", name)
	} else {
		code = http.StatusServiceUnavailable
		// Without ?verbose, still say why in one line.
		if !verbose(r) {
			for _, l := range lines {
				if !l.ok {
					b.WriteString(l.String())
					b.WriteByte('\n')
				}
			}
		}
		fmt.Fprintf(&b, "%s check failed\n", name)
	}
	writeText(w, code, b.String())
}

// writeText writes a plain-text answer that no cache keeps.
func writeText(w http.ResponseWriter, code int, body string) {
	hd := w.Header()
	hd.Set("Content-Type", "text/plain; charset=utf-8")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body))
}
