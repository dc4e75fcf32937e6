package probes

import (
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/drainkit/drainkit/lifecycle"
)

// maxReason bounds the operator-supplied ?reason that goes into the
// transition's reason and the logs.
const maxReason = 200

// action wraps an operator endpoint with the loopback-or-token rule and one
// log line per call (never with the credential).
func (h *Handler) action(name string, fn func(w http.ResponseWriter, r *http.Request, reason string) int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		peer := peerIP(r.RemoteAddr)
		if code, msg := h.auth.authorize(r); code != 0 {
			h.opts.Logger.Warn("drainkit: admin action refused", "action", name, "peer", peer, "status", code, "why", msg)
			if r.Header.Get("Authorization") == "" && h.auth.hasToken {
				w.Header().Set("WWW-Authenticate", `Bearer realm="drainkit admin"`)
			}
			writeText(w, code, msg+"\n")
			return
		}
		reason := "POST /" + name + " from " + peer
		if q := r.URL.Query().Get("reason"); q != "" {
			if len(q) > maxReason {
				q = q[:maxReason]
			}
			reason += ": " + q
		}
		code := fn(w, r, reason)
		h.opts.Logger.Info("drainkit: admin action", "action", name, "peer", peer, "status", code, "state", h.lc.State().String())
	})
}

// drain answers 202 once the drain started, or with ?wait=propagation 200
// once the propagation window ended (a preStop hook's call).
func (h *Handler) drain(w http.ResponseWriter, r *http.Request, reason string) int {
	wait := r.URL.Query().Get("wait")
	if wait != "" && wait != "propagation" {
		return reply(w, http.StatusBadRequest, fmt.Sprintf("wait: unknown value %q; allowed: propagation\n", wait))
	}
	if wait != "" {
		h.hookDrain.Store(true) // before the drain starts: /servingz never sees it unset while this drain runs
	}
	if err := h.lc.Drain(reason); err != nil {
		return replyErr(w, err)
	}
	if wait == "" {
		return reply(w, http.StatusAccepted, "drain started\n")
	}
	if err := h.lc.WaitPropagation(r.Context()); err != nil {
		return reply(w, http.StatusServiceUnavailable, "drain started; stopped waiting for the propagation window: "+err.Error()+"\n")
	}
	return reply(w, http.StatusOK, "drain started; propagation window ended\n")
}

// eject takes a READY instance out of rotation; 409 in other states.
func (h *Handler) eject(w http.ResponseWriter, r *http.Request, reason string) int {
	if err := h.lc.Eject(reason); err != nil {
		return replyErr(w, err)
	}
	return reply(w, http.StatusOK, "state: "+h.lc.State().String()+"\n")
}

// restore returns an operator-ejected instance to READY; 409 when the checks
// ejected it or in other states.
func (h *Handler) restore(w http.ResponseWriter, r *http.Request, reason string) int {
	if err := h.lc.Restore(reason); err != nil {
		return replyErr(w, err)
	}
	return reply(w, http.StatusOK, "state: "+h.lc.State().String()+"\n")
}

// replyErr maps lifecycle errors: an illegal transition or a check-ejected
// restore is a conflict with the current state (409); anything else is 500.
func replyErr(w http.ResponseWriter, err error) int {
	if errors.Is(err, lifecycle.ErrIllegalTransition) {
		return reply(w, http.StatusConflict, err.Error()+"\n")
	}
	return reply(w, http.StatusInternalServerError, err.Error()+"\n")
}

func reply(w http.ResponseWriter, code int, body string) int {
	writeText(w, code, body)
	return code
}

func peerIP(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return remoteAddr
}
