package drill

import (
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/drainkit/drainkit/config"
)

// adminTokenVar is the variable a drainkit program reads its admin token
// from (config key admin.token): with it set, POST /drain requires
// "Authorization: Bearer <token>" from every caller, loopback included, and
// GET /state shows its details only to a caller that sends it.
var adminTokenVar = config.EnvVar("admin.token")

// adminToken returns the admin token a replica started with env has (the
// last DRAINKIT_ADMIN_TOKEN in it, as the process sees it), "" for none.
// A token set only in the service's --config file is not seen: the drill
// then calls without one, as `drainkit prestop` does without the variable.
func adminToken(env []string) string {
	token := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, adminTokenVar+"="); ok {
			token = v
		}
	}
	return token
}

// adminRequest builds a request to the replica's admin listener (path with
// its query), carrying the replica's admin token when it has one. The token
// goes only into the header: never into an error, a log or a report.
func (r *Replica) adminRequest(ctx context.Context, method, path string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://"+r.AdminAddr+path, nil)
	if err != nil {
		return nil, err
	}
	if r.adminToken != "" {
		req.Header.Set("Authorization", "Bearer "+r.adminToken)
	}
	return req, nil
}

// getAdmin does GET path on the replica's admin listener and returns the
// body (at most 1 MiB); ok is false unless it answered 200.
func (r *Replica) getAdmin(ctx context.Context, client *http.Client, path string) ([]byte, bool) {
	req, err := r.adminRequest(ctx, http.MethodGet, path)
	if err != nil {
		return nil, false
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return b, err == nil && resp.StatusCode == http.StatusOK
}
