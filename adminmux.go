package drainkit

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/drainkit/drainkit/probes"
)

// adminMux mounts the WithAdminHandler handlers next to ph, the probes. It
// returns an error naming the pattern when one is invalid, conflicts with
// another (http.ServeMux would panic) or takes over an endpoint of the
// probes (probes.Routes, DESIGN.md section 2): a handler at /readyz or
// /servingz that keeps answering 200 would keep a draining instance in
// rotation.
func (s *service) adminMux(ph http.Handler) (h http.Handler, err error) {
	if len(s.adminHandlers) == 0 {
		return ph, nil
	}
	mux := http.NewServeMux()
	for _, a := range s.adminHandlers {
		if err := handle(mux, a.pattern, a.h); err != nil {
			return nil, err
		}
	}
	if err := handle(mux, "/", ph); err != nil {
		return nil, fmt.Errorf("%w: the probes are mounted at \"/\"; mount the handler under a path of its own", err)
	}
	for _, r := range probes.Routes() {
		for _, host := range []string{"", "localhost", "127.0.0.1"} {
			req := &http.Request{Method: r.Method, Host: host, URL: &url.URL{Path: r.Path}}
			if _, pattern := mux.Handler(req); pattern != "/" {
				return nil, fmt.Errorf("WithAdminHandler(%q): takes over the probe endpoint %s; mount it elsewhere, e.g. under /debug/", pattern, r)
			}
		}
	}
	return mux, nil
}

// handle is mux.Handle with its panic (a bad or conflicting pattern, a nil
// handler) turned into an error.
func handle(mux *http.ServeMux, pattern string, h http.Handler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("WithAdminHandler(%q): %s", pattern, muxPanic(p))
		}
	}()
	mux.Handle(pattern, h)
	return nil
}

// registeredAt is the "(registered at file:line)" of ServeMux's conflict
// panics: it would point into this file, not at the caller's option.
var registeredAt = regexp.MustCompile(` \(registered at [^)]*\)`)

// muxPanic renders a ServeMux panic as one line without file positions.
func muxPanic(p any) string {
	msg, _, _ := strings.Cut(fmt.Sprint(p), "\n")
	return strings.TrimSuffix(registeredAt.ReplaceAllString(msg, ""), ":")
}
