package drill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/drainkit/drainkit/registry/nacos"
)

// nacosGroup is the group the drill's replicas register in (registry/nacos's
// default) and that its consumers and operator address.
const nacosGroup = "DEFAULT_GROUP"

// nacosAPI is what the drill itself says to a Nacos server over its HTTP open
// API, with no SDK: what a Nacos 1.x client polls (the consumers' healthy
// list) and what an operator's console sends (an instance's enabled flag).
// registry/nacos's Source is drainkit's consumer side; this is the naive
// one's and the operator's.
type nacosAPI struct {
	base string // "http://<addr>/nacos"
	hc   *http.Client
	// user and password log the drill in (Config.NacosUsername): an
	// operator's console calls Nacos 3's admin API with an admin's token.
	user, password string

	mu    sync.Mutex
	token string // the access token, "" before the first login
}

func newNacosAPI(srv nacos.Server) *nacosAPI {
	return &nacosAPI{base: "http://" + srv.Addrs[0] + "/nacos", user: srv.Username, password: srv.Password,
		hc: &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 2}}}
}

func (a *nacosAPI) close() { a.hc.CloseIdleConnections() }

// do sends method path?q and decodes a 200's JSON body into out (nil: ignore
// the body), with an access token when the drill has a login. A 404
// carrying Nacos's own {"code": ...} (a service without instances) is
// errNacosNoService; any other 404 errNacosNoPath (the server lacks the
// API: another major version); a 401 or 403 errNacosDenied.
func (a *nacosAPI) do(ctx context.Context, method, path string, q url.Values, out any) error {
	tok, err := a.login(ctx)
	if err != nil {
		return err
	}
	if tok != "" {
		q = maps.Clone(q)
		q.Set("accessToken", tok)
	}
	return a.send(ctx, method, path, q, out)
}

// send is do without the login.
func (a *nacosAPI) send(ctx context.Context, method, path string, q url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, a.base+path+"?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its URL may carry the token or the password
		}
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && strings.Contains(string(body), `"code"`):
		return fmt.Errorf("%w: %s %s", errNacosNoService, method, path)
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%w: %s %s", errNacosNoPath, method, path)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w: %s %s: %s", errNacosDenied, method, path, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("%s %s: %s: %.200s", method, path, resp.Status, body)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}

// login returns the drill's access token ("" without a login), logging in
// once (POST /v3/auth/user/login; the token lasts hours, longer than a
// drill). A denied login says so, never with the password.
func (a *nacosAPI) login(ctx context.Context) (string, error) {
	if a.user == "" {
		return "", nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token != "" {
		return a.token, nil
	}
	var r struct {
		AccessToken string `json:"accessToken"`
	}
	form := url.Values{"username": {a.user}, "password": {a.password}}
	if err := a.send(ctx, http.MethodPost, "/v3/auth/user/login", form, &r); err != nil {
		return "", fmt.Errorf("nacos: login as %q (DRAINKIT_REGISTRY_NACOS_USERNAME and _PASSWORD): %w", a.user, err)
	}
	a.token = r.AccessToken
	return a.token, nil
}

var (
	errNacosNoService = errors.New("nacos: no instance of the service")
	errNacosNoPath    = errors.New("nacos: no such API on this server")
	errNacosDenied    = errors.New("nacos: access denied")
)

// healthyList is GET /v1/ns/instance/list?healthyOnly=true, what a Nacos 1.x
// client polls: the healthy, enabled instances' host:port, sorted.
func (a *nacosAPI) healthyList(ctx context.Context, service string) ([]string, error) {
	q := url.Values{"serviceName": {service}, "groupName": {nacosGroup}, "healthyOnly": {"true"}}
	var l struct {
		Hosts []struct {
			IP      string `json:"ip"`
			Port    int    `json:"port"`
			Healthy bool   `json:"healthy"`
			Enabled bool   `json:"enabled"`
		} `json:"hosts"`
	}
	err := a.do(ctx, http.MethodGet, "/v1/ns/instance/list", q, &l)
	if errors.Is(err, errNacosNoService) {
		return []string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, h := range l.Hosts {
		if h.Healthy && h.Enabled {
			out = append(out, net.JoinHostPort(h.IP, strconv.Itoa(h.Port)))
		}
	}
	slices.Sort(out)
	return out, nil
}

// setEnabled is the console's "offline" (enabled false) or "online" of the
// ephemeral instance on addr (host:port): PUT /v3/admin/ns/instance, the
// admin API Nacos 3.x's console calls, else PUT /v1/ns/instance, what the 1.x
// and 2.x consoles call. Nacos keeps it as the operator's metadata over the
// client's registration. A 3.x server refuses the update until its Raft
// group has elected itself (some seconds after a start); it is retried until
// ctx ends.
func (a *nacosAPI) setEnabled(ctx context.Context, service, addr string, enabled bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	q := url.Values{"serviceName": {service}, "groupName": {nacosGroup}, "ip": {host}, "port": {port},
		"clusterName": {"DEFAULT"}, "ephemeral": {"true"}, "enabled": {strconv.FormatBool(enabled)}, "weight": {"1"}}
	for {
		var r struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		err := a.do(ctx, http.MethodPut, "/v3/admin/ns/instance", q, &r)
		if errors.Is(err, errNacosNoPath) {
			err = a.do(ctx, http.MethodPut, "/v1/ns/instance", q, nil) // answers "ok"
		} else if err == nil && r.Code != 0 {
			err = fmt.Errorf("PUT /v3/admin/ns/instance: code %d: %s", r.Code, r.Message)
		}
		switch {
		case err == nil:
			return nil
		case errors.Is(err, errNacosDenied):
			// Not retried: Nacos 3 opens its admin API to admins only by
			// default.
			return fmt.Errorf("nacos: the console's %s of %s (%s): %w; log the drill in as a Nacos admin with DRAINKIT_REGISTRY_NACOS_USERNAME and DRAINKIT_REGISTRY_NACOS_PASSWORD",
				onlineWord(enabled), addr, service, err)
		}
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("nacos: the console's %s of %s (%s): %w", onlineWord(enabled), addr, service, err)
		case <-t.C:
		}
	}
}

func onlineWord(enabled bool) string {
	if enabled {
		return "online"
	}
	return "offline"
}

// nacosPoller is a Nacos 1.x client's view of a service: the healthy list
// polled every interval (the first poll at once) and kept as it is when a
// poll fails. It is the naive consumers' discovery with --nacos.
type nacosPoller struct {
	api      *nacosAPI
	service  string
	interval time.Duration

	mu      sync.Mutex
	addrs   []string
	changed chan struct{} // closed and replaced on every change of addrs
	polled  bool
	lastErr error

	cancel context.CancelFunc
	done   chan struct{}
}

func newNacosPoller(api *nacosAPI, service string, interval time.Duration) *nacosPoller {
	ctx, cancel := context.WithCancel(context.Background())
	p := &nacosPoller{api: api, service: service, interval: interval, changed: make(chan struct{}),
		cancel: cancel, done: make(chan struct{})}
	go p.run(ctx)
	return p
}

func (p *nacosPoller) run(ctx context.Context) {
	defer close(p.done)
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		p.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (p *nacosPoller) poll(ctx context.Context) {
	addrs, err := p.api.healthyList(ctx, p.service)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lastErr = err
	if err != nil {
		return // the old list stays, as such clients do
	}
	if p.polled && slices.Equal(addrs, p.addrs) {
		return
	}
	p.addrs, p.polled = addrs, true
	close(p.changed)
	p.changed = make(chan struct{})
}

// list returns the last polled list, whether a poll succeeded yet, its
// change channel and the last poll's error.
func (p *nacosPoller) list() (addrs []string, polled bool, changed <-chan struct{}, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addrs, p.polled, p.changed, p.lastErr
}

func (p *nacosPoller) close() {
	p.cancel()
	<-p.done
}
