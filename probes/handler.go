package probes

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync/atomic"

	"github.com/drainkit/drainkit/lifecycle"
)

// Handler is the admin listener's http.Handler:
//
//	GET|HEAD /startupz, /readyz, /livez   200 or 503 (see the package doc); ?verbose adds a line per check
//	GET|HEAD /servingz                    /readyz for Kubernetes' readinessProbe (see servingz)
//	GET|HEAD /state                       JSON of lifecycle.Status; reasons and error texts only for the loopback-or-token rule
//	POST /drain                           202; ?wait=propagation: 200 once the propagation window ended
//	POST /eject, POST /restore            200; 409 for an illegal transition
//
// A wrong method gets 405 with an Allow header; an unknown path 404. The POST
// endpoints follow the loopback-or-token rule of Options.Token: with a token,
// 403 when the token is missing (with a Bearer challenge) or wrong, from every
// peer; without one, 403 for a non-loopback peer or a Host
// header that is not a loopback address or localhost (a DNS-rebinding
// defence). They also reject cross-origin browser requests with 403
// (http.CrossOriginProtection). Lifecycle errors map to 409 (an illegal
// transition, or POST /restore of an instance the readiness checks ejected).
// POST /drain?wait=propagation answers 503 if the caller goes away before the
// window ended; the drain continues. An optional ?reason=text (at most 200
// bytes kept) is added to the transition's reason.
//
// Routes lists these endpoints. Create it with New and Close it when the
// admin server has shut down.
type Handler struct {
	lc   *lifecycle.Lifecycle
	opts Options
	auth authorizer
	wd   *watchdog
	mux  *http.ServeMux
	// hookDrain is set by the first POST /drain?wait=propagation: the
	// preStop hook's call, so the kubelet is terminating the pod.
	hookDrain atomic.Bool
}

// New returns a Handler for lc and starts its liveness watchdog. It returns a
// *budget.RangeError if a watchdog setting is out of range.
func New(lc *lifecycle.Lifecycle, opts Options) (*Handler, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	h := &Handler{lc: lc, opts: opts, auth: newAuthorizer(opts.Token), mux: http.NewServeMux()}

	h.mount()

	h.wd = newWatchdog(opts.WatchdogInterval, opts.WatchdogThreshold, func() { _ = lc.Status() })
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Close stops the watchdog goroutine and waits for it; /livez fails once
// WatchdogThreshold has passed after Close. It is idempotent and returns nil.
func (h *Handler) Close() error {
	h.wd.close()
	return nil
}

// state answers GET /state with the JSON of lc.Status(): state, since, cause,
// reason, in-flight counts, check results, registry outcomes and, once
// draining, the timeline. Error texts (of readiness checks, registrars and
// drain steps), the reasons (the state's and the timeline's: free text that
// carries a failing server's or warm-up's error, or what an operator or the
// program wrote) and the registrars' details often name hosts, DSNs with
// their passwords, or users, so only a caller the operator actions would
// accept (the loopback-or-token rule, see Options.Token) gets them; any
// other caller gets the same document with each of these texts replaced by
// "redacted", without the details, and with a "redacted" key saying why.
// The cause (a fixed word: signal, failure, operator, ...) stays. The token
// itself is never part of it.
func (h *Handler) state(w http.ResponseWriter, r *http.Request) {
	doc := stateDoc{Status: h.lc.Status()}
	if code, why := h.auth.authorize(r); code != 0 {
		doc.Status = redact(doc.Status)
		doc.Redacted = "reasons, error texts and registry details withheld: " + why
	}
	body, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		writeText(w, http.StatusInternalServerError, err.Error()+"\n")
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(body, '\n'))
}

// stateDoc is GET /state's document: lifecycle.Status, and why parts of it
// were withheld ("" when nothing was).
type stateDoc struct {
	lifecycle.Status
	Redacted string `json:"redacted,omitempty"`
}

// redactedText replaces an error text a caller may not see.
const redactedText = "redacted"

// redact returns st without the texts that may name infrastructure: the
// reasons and the check, registrar and drain-step errors become
// redactedText (so that a failure still shows as one), and the registrars'
// details are dropped. States, causes, times, counts and names stay. A
// reason is redacted whatever its cause: the lifecycle writes a server's
// failure (CauseFailure) and a warm-up error (CauseWarmup) into it, and an
// operator's or the program's text (CauseOperator) may hold anything.
func redact(st lifecycle.Status) lifecycle.Status {
	st.Reason = redactIfSet(st.Reason)
	st.Checks = slices.Clone(st.Checks)
	for i := range st.Checks {
		st.Checks[i].Err = redactIfSet(st.Checks[i].Err)
	}
	st.Registry = slices.Clone(st.Registry)
	for i := range st.Registry {
		st.Registry[i].Err = redactIfSet(st.Registry[i].Err)
		st.Registry[i].Detail = nil
	}
	if st.Timeline != nil {
		tl := *st.Timeline
		tl.Reason = redactIfSet(tl.Reason)
		tl.Steps = slices.Clone(tl.Steps)
		for i := range tl.Steps {
			tl.Steps[i].Err = redactIfSet(tl.Steps[i].Err)
		}
		st.Timeline = &tl
	}
	return st
}

func redactIfSet(s string) string {
	if s == "" {
		return ""
	}
	return redactedText
}
