package probes

import "net/http"

// Route is one endpoint of Handler: the method and path of its ServeMux
// pattern. A GET route also answers HEAD.
type Route struct {
	Method string // http.MethodGet or http.MethodPost
	Path   string // e.g. "/readyz"
}

// String returns the route's ServeMux pattern, e.g. "GET /readyz".
func (r Route) String() string { return r.Method + " " + r.Path }

// routes is every endpoint of Handler with the method serving it; New
// mounts exactly these, and Routes lists them, so that the endpoints a
// program may not take over (drainkit.WithAdminHandler) are the ones served.
var routes = []struct {
	Route
	serve func(h *Handler) http.Handler
}{
	{Route{http.MethodGet, "/startupz"}, func(h *Handler) http.Handler { return http.HandlerFunc(h.startupz) }},
	{Route{http.MethodGet, "/readyz"}, func(h *Handler) http.Handler { return http.HandlerFunc(h.readyz) }},
	{Route{http.MethodGet, "/livez"}, func(h *Handler) http.Handler { return http.HandlerFunc(h.livez) }},
	{Route{http.MethodGet, "/servingz"}, func(h *Handler) http.Handler { return http.HandlerFunc(h.servingz) }},
	{Route{http.MethodGet, "/state"}, func(h *Handler) http.Handler { return http.HandlerFunc(h.state) }},
	{Route{http.MethodPost, "/drain"}, func(h *Handler) http.Handler { return h.action("drain", h.drain) }},
	{Route{http.MethodPost, "/eject"}, func(h *Handler) http.Handler { return h.action("eject", h.eject) }},
	{Route{http.MethodPost, "/restore"}, func(h *Handler) http.Handler { return h.action("restore", h.restore) }},
}

// Routes returns every endpoint Handler serves, in a new slice: the probes
// (/startupz, /readyz, /livez, /servingz), GET /state and the operator
// actions. A handler mounted beside Handler on the admin listener must take
// none of them over: one answering 200 at /readyz or /servingz would keep a
// draining instance in rotation.
func Routes() []Route {
	out := make([]Route, len(routes))
	for i, r := range routes {
		out[i] = r.Route
	}
	return out
}

// mount registers every route of h on h.mux. A route that changes state
// (every method but GET) also refuses cross-origin browser requests.
func (h *Handler) mount() {
	csrf := http.NewCrossOriginProtection()
	for _, r := range routes {
		sh := r.serve(h)
		if r.Method != http.MethodGet {
			sh = csrf.Handler(sh)
		}
		h.mux.Handle(r.String(), sh) // GET patterns also match HEAD; the mux answers 405 with Allow
	}
}
