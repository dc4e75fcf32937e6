package nacos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// openAPI reads the server's HTTP open API directly, so that what drainkit
// decides on is the server's answer, never nacos-sdk-go's cached copy. It
// tries the servers in order, starting with the one that last answered.
type openAPI struct {
	srv Server
	hc  *http.Client

	mu      sync.Mutex
	next    int       // index of the server to try first
	token   string    // accessToken, when Username is set ("" after a refused login)
	expires time.Time // when token must be renewed, or a refused login tried again
	// loginDenied is the last login's denial (wrong credentials), nil after
	// a login that succeeded.
	loginDenied error
}

// loginRetry is how long after a refused login the open API is called
// without a token before logging in again: a server whose client API wants
// no login still answers, and a wrong password is not sent every call.
const loginRetry = time.Minute

func newOpenAPI(s Server) *openAPI {
	s = s.withDefaults()
	return &openAPI{srv: s, hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2, IdleConnTimeout: 30 * time.Second}}}
}

// close releases idle connections.
func (a *openAPI) close() { a.hc.CloseIdleConnections() }

// host is an instance as the open API lists it.
type host struct {
	IP          string            `json:"ip"`
	Port        int               `json:"port"`
	Weight      float64           `json:"weight"`
	Healthy     bool              `json:"healthy"`
	Enabled     bool              `json:"enabled"`
	Ephemeral   bool              `json:"ephemeral"`
	ClusterName string            `json:"clusterName"`
	InstanceID  string            `json:"instanceId"`
	Metadata    map[string]string `json:"metadata"`
}

// errNotFound is an HTTP 404 or 410: the API does not exist on this server.
var errNotFound = errors.New("nacos: open API path not found")

// errDenied is an HTTP 401 or 403: the server wants a login (or another
// user) for this API, e.g. Nacos 3's admin API, which by default wants an
// admin's token while its client API answers anyone.
var errDenied = errors.New("nacos: access denied")

// errNoSuchService is Nacos's own 404 result: the service (or its cluster)
// has no instance.
var errNoSuchService = errors.New("nacos: no such service")

// isNacosResult reports whether body is a Nacos API result ({"code": ...}),
// as opposed to the web server's page for a missing path.
func isNacosResult(body []byte) bool {
	var r struct {
		Code *int `json:"code"`
	}
	return json.Unmarshal(body, &r) == nil && r.Code != nil
}

// get GETs path with query on the servers until one answers 200, and decodes
// the body into out.
func (a *openAPI) get(ctx context.Context, path string, q url.Values, out any) error {
	a.mu.Lock()
	first := a.next
	a.mu.Unlock()
	var errs []error
	n := len(a.srv.Addrs)
	for i := range n {
		idx := (first + i) % n
		err := a.getOne(ctx, a.srv.Addrs[idx], path, q, out)
		if err == nil || errors.Is(err, errNotFound) || errors.Is(err, errNoSuchService) || errors.Is(err, errDenied) {
			a.mu.Lock()
			a.next = idx
			a.mu.Unlock()
			return err
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return errors.Join(errs...)
}

func (a *openAPI) getOne(ctx context.Context, addr, path string, q url.Values, out any) error {
	q = cloneValues(q)
	if a.srv.Username != "" {
		tok, err := a.login(ctx, addr)
		if err != nil && !errors.Is(err, errDenied) {
			return err
		}
		if tok != "" { // after a refused login, the server decides whether the API wants one
			q.Set("accessToken", tok)
		}
	}
	u := "http://" + addr + strings.TrimSuffix(a.srv.ContextPath, "/") + path + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s%s: %w", addr, path, unwrapURL(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("GET %s%s: %w", addr, path, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && isNacosResult(body):
		// Nacos's own "not found" (a service or cluster with no instance
		// yet), not a missing path.
		return fmt.Errorf("%w: GET %s%s: %s", errNoSuchService, addr, path, truncate(body))
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return fmt.Errorf("%w: GET %s%s: %s", errNotFound, addr, path, resp.Status)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return &deniedError{call: "GET " + addr + path, status: resp.Status}
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("GET %s%s: %s: %s", addr, path, resp.Status, truncate(body))
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("GET %s%s: %w: %s", addr, path, err, truncate(body))
	}
	return nil
}

// login returns an access token for addr's cluster, logging in when there
// is none or it is about to expire: POST /v3/auth/user/login (Nacos 3),
// else /v1/auth/login (Nacos 1.x and 2.x). A refused login (wrong
// credentials) returns "" and an error wrapping errDenied, and for
// loginRetry after it "" and nil, so that calls go on without a token.
func (a *openAPI) login(ctx context.Context, addr string) (string, error) {
	a.mu.Lock()
	tok, exp := a.token, a.expires
	a.mu.Unlock()
	if time.Now().Before(exp) {
		return tok, nil
	}
	tok, ttl, err := a.loginAt(ctx, addr, "/v3/auth/user/login")
	if errors.Is(err, errNotFound) {
		tok, ttl, err = a.loginAt(ctx, addr, "/v1/auth/login")
	}
	switch {
	case errors.Is(err, errDenied):
		a.mu.Lock()
		a.token, a.expires, a.loginDenied = "", time.Now().Add(loginRetry), err
		a.mu.Unlock()
		return "", err
	case err != nil:
		return "", err
	}
	if ttl <= 0 {
		ttl = 5 * time.Minute
	}
	a.mu.Lock()
	a.token, a.expires, a.loginDenied = tok, time.Now().Add(ttl/2), nil
	a.mu.Unlock()
	return tok, nil
}

// deniedLogin returns the last login's denial, nil when the last login
// succeeded or there was none.
func (a *openAPI) deniedLogin() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.loginDenied
}

// loginAt logs in with the login API at path.
func (a *openAPI) loginAt(ctx context.Context, addr, path string) (string, time.Duration, error) {
	form := url.Values{"username": {a.srv.Username}, "password": {a.srv.Password}}
	u := "http://" + addr + strings.TrimSuffix(a.srv.ContextPath, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := a.hc.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("POST %s%s: %w", addr, path, unwrapURL(err))
	}
	defer resp.Body.Close()
	// The body may echo the user name, never the password; still, errors
	// say only the status.
	call := fmt.Sprintf("POST %s%s as %q", addr, path, a.srv.Username)
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound, http.StatusGone:
		return "", 0, fmt.Errorf("%w: %s: %s", errNotFound, call, resp.Status)
	case http.StatusUnauthorized, http.StatusForbidden:
		return "", 0, &deniedError{call: call, status: resp.Status}
	default:
		return "", 0, fmt.Errorf("%s: %s", call, resp.Status)
	}
	var r struct {
		AccessToken string `json:"accessToken"`
		TokenTTL    int64  `json:"tokenTtl"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&r); err != nil || r.AccessToken == "" {
		return "", 0, fmt.Errorf("POST %s%s: no accessToken in the answer", addr, path)
	}
	return r.AccessToken, time.Duration(r.TokenTTL) * time.Second, nil
}

// deniedError is a call the server denied with 401 or 403 (errDenied).
type deniedError struct {
	call   string // "GET host:port/path", never with the token
	status string // e.g. "403 Forbidden"
}

func (e *deniedError) Error() string { return e.call + ": " + e.status }
func (e *deniedError) Unwrap() error { return errDenied }

// listed is the 1.x open API's instance list (GET /v1/ns/instance/list), the
// consumers' view: the server leaves out disabled instances, and with
// healthyOnly unhealthy ones.
type listed struct {
	Hosts       []host `json:"hosts"`
	LastRefTime int64  `json:"lastRefTime"`
}

// consumerList reads the instances a consumer of service sees.
func (a *openAPI) consumerList(ctx context.Context, service string, clusters []string) (listed, error) {
	q := url.Values{"serviceName": {service}, "groupName": {a.srv.Group}, "healthyOnly": {"true"}}
	if a.srv.Namespace != "" {
		q.Set("namespaceId", a.srv.Namespace)
	}
	if len(clusters) > 0 {
		q.Set("clusters", strings.Join(clusters, ","))
	}
	var l listed
	err := a.get(ctx, "/v1/ns/instance/list", q, &l)
	if errors.Is(err, errNoSuchService) {
		return listed{}, nil
	}
	return l, err
}

// adminList reads every instance of service, disabled ones included, with
// the admin API of Nacos 3.x (GET /v3/admin/ns/instance/list). Where that
// API is missing (2.x) or refuses the call (Nacos 3's shipped default wants
// an admin's token for it), it reads the consumers' list instead (unhealthy
// instances included) and reports disabledVisible false: there an
// operator's offline looks like absence. refused is then the refusal (nil
// otherwise), for the caller to report.
func (a *openAPI) adminList(ctx context.Context, service string) (hosts []host, disabledVisible bool, refused, err error) {
	q := url.Values{"serviceName": {service}, "groupName": {a.srv.Group}}
	if a.srv.Namespace != "" {
		q.Set("namespaceId", a.srv.Namespace)
	}
	var r struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    []host `json:"data"`
	}
	err = a.get(ctx, "/v3/admin/ns/instance/list", q, &r)
	switch {
	case errors.Is(err, errNoSuchService):
		return nil, true, nil, nil
	case errors.Is(err, errDenied):
		refused = err
		fallthrough
	case errors.Is(err, errNotFound):
		q.Set("healthyOnly", "false")
		var l listed
		err = a.get(ctx, "/v1/ns/instance/list", q, &l)
		if errors.Is(err, errNoSuchService) {
			err = nil
		}
		return l.Hosts, false, refused, err
	case err != nil:
		return nil, true, nil, err
	case r.Code != 0:
		return nil, true, nil, fmt.Errorf("GET /v3/admin/ns/instance/list: code %d: %s", r.Code, r.Message)
	}
	return r.Data, true, nil, nil
}

func cloneValues(q url.Values) url.Values {
	out := make(url.Values, len(q)+1)
	for k, v := range q {
		out[k] = v
	}
	return out
}

// unwrapURL drops *url.Error's repetition of the URL, which may carry the
// access token.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func truncate(b []byte) string {
	if len(b) > 300 {
		b = b[:300]
	}
	return strings.TrimSpace(string(b))
}
