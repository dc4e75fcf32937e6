package serve

import (
	"io"
	"net/http"
	"time"

	"github.com/drainkit/drainkit/examples/httpservice/app"
)

// maxBody bounds the body of a POST / the drill sends (`drill --method
// POST`): a few bytes, read to the end so that the request was really
// received.
const maxBody = 64 << 10

// handler is the example service's routes (app.Handler) for every strategy,
// plus POST /, which reads its body and answers like GET /: the drill's
// non-idempotent requests get the same handling as its GETs. Until warm
// (Options.Warmup after the start; zero: at once) every request gets 503
// "warming up": the caches are cold, whatever readiness says.
func handler(warm time.Time) http.Handler {
	routes := app.Handler()
	mux := http.NewServeMux()
	mux.Handle("/", routes)
	mux.HandleFunc("POST /{$}", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, maxBody)); err != nil {
			http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		get := r.Clone(r.Context())
		get.Method = http.MethodGet
		get.Body = http.NoBody
		routes.ServeHTTP(w, get)
	})
	if warm.IsZero() {
		return mux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if time.Now().Before(warm) {
			http.Error(w, "warming up", http.StatusServiceUnavailable)
			return
		}
		mux.ServeHTTP(w, r)
	})
}
