// Package nacostest runs a real Nacos server for tests: one standalone node
// (naming and config, embedded Derby) on free ports with a temporary
// nacos.home, stopped when the test ends. The server is the jar
// that scripts/nacos.sh builds once from tools/nacos into the cache (Nacos
// 3.1.0-bugfix from Maven Central); $DRAINKIT_NACOS_JAR (set by `make race`)
// names it when set. It runs with the `java` on PATH (JDK 17 or later). Like
// the Consul and etcd harnesses (internal/toolbin.Require), a plain `go test`
// on a machine where scripts/nacos.sh has not built the jar yet skips, with
// one line naming `make test`; under `make test` or with CI set a missing
// jar, or a server that does not start, fails.
//
// A Nacos server is slow to start (about 30 s on an idle 2-core machine,
// up to two minutes under load): a package starts one in TestMain (see
// StartMain) and its tests share it, each on its own service names.
//
// Authentication is Nacos 3.1's shipped default unless a test asks for the
// FullAuth variant (Options.Auth): the client API (registration over gRPC,
// the open API's instance lists) answers anyone, and the admin API
// (/v3/admin/*, what the console and an operator call) wants an admin's
// access token. Every server gets a random token secret key and server
// identity (which Nacos 3 refuses to start without, as the distribution's
// startup does) and an admin user, AdminUser with a random AdminPassword,
// created as the console's first login does (POST /v3/auth/user/admin); a
// test that acts as an operator logs in with them (AdminToken). FullAuth
// turns the client API's authentication on as well and adds User, a
// non-admin user allowed to read and write the public namespace, for the
// clients.
//
// Stop and Restart keep nacos.home: the Derby database (persistent instances,
// namespaces, operators' instance settings kept there) survives, while
// ephemeral instances, which live in the server's memory and belong to their
// clients' connections, are gone until their clients register them again.
package nacostest

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/toolbin"
)

// EnvJar is the environment variable naming the server's jar.
const EnvJar = "DRAINKIT_NACOS_JAR"

// StartTimeout bounds how long Start and Restart wait for the server to
// answer its HTTP open API and accept connections on its gRPC port.
const StartTimeout = 4 * time.Minute

// stopTimeout is how long Stop waits after SIGTERM before SIGKILL.
const stopTimeout = 15 * time.Second

// PushTaskDelay is the test server's nacos.naming.push.pushTaskDelay (the
// server's default is 500ms, which batches changes): how long after a
// registration or deregistration the server rebuilds the service's
// instance list, the one every list API (1.x, 2.x and 3.x) and every push
// serves from its cache. A deployment that wants its consumers told at
// once sets it to 0 as well.
const PushTaskDelay = 0

// ListDelay bounds how long after a change the server's consumers' lists
// show it: PushTaskDelay, then the next round of the server's push engine
// (its delay-task engine runs every 100ms, a fixed interval). The
// clients' registrations themselves (the admin API's publisher list)
// change with the deregistration call.
const ListDelay = PushTaskDelay + 100*time.Millisecond

// GRPCOffset is the distance from the HTTP port to the gRPC port that Nacos
// 2.x and 3.x clients connect to (nacos-sdk-go's default too).
const GRPCOffset = 1000

// Auth says which of the server's APIs want a login.
type Auth int

const (
	// ShippedAuth is Nacos 3.1's shipped default: the client API open
	// (nacos.core.auth.enabled=false), the admin API behind a login
	// (nacos.core.auth.admin.enabled=true).
	ShippedAuth Auth = iota
	// FullAuth turns the client API's authentication on as well
	// (nacos.core.auth.enabled=true): registering and reading the instance
	// lists want a user's access token too.
	FullAuth
)

func (a Auth) String() string {
	if a == FullAuth {
		return "full auth"
	}
	return "shipped auth defaults"
}

// Options are a server's settings; the zero value is Nacos's shipped
// defaults.
type Options struct {
	Auth Auth
	// ShippedPushDelay keeps the server's own
	// nacos.naming.push.pushTaskDelay (500 ms, which batches changes)
	// instead of PushTaskDelay: for tests of consumers as deployed against
	// a server as shipped (the Spring Cloud consumer of issue 32).
	ShippedPushDelay bool
}

// AdminUser is the admin user every server has (the one Nacos 3's console
// asks a password for on its first login).
const AdminUser = "nacos"

// ClientUser is the non-admin user of a FullAuth server: it may read and
// write the public namespace (role ClientRole), not call the admin API.
const (
	ClientUser = "drainkit"
	ClientRole = "drainkit-client"
)

// Server is one Nacos server, running or stopped. Its methods are safe for
// concurrent use.
type Server struct {
	// Addr is the HTTP address, "127.0.0.1:<port>": the value for
	// NACOS_SERVER_ADDR. The gRPC port is Port+GRPCOffset.
	Addr string
	// Port is the HTTP port.
	Port int
	// BaseURL is "http://" + Addr + "/nacos", the open API's root.
	BaseURL string
	// StartupTime is how long the last start took, up to the server
	// answering on both ports.
	StartupTime time.Duration
	// Auth is the server's authentication mode.
	Auth Auth
	// AdminPassword is AdminUser's password (random per server).
	AdminPassword string
	// User and Password are a non-admin user's credentials on a FullAuth
	// server (ClientUser); both "" with ShippedAuth, where clients need
	// none.
	User, Password string

	jar     string
	home    string
	secrets []string // -D settings: the token secret key and server identity
	// shippedPush keeps the server's own push delay (Options.ShippedPushDelay).
	shippedPush bool
	proc        toolbin.Server

	mu      sync.Mutex
	token   string    // AdminUser's access token
	expires time.Time // when token is to be renewed
}

// StartMain starts a server for a package's TestMain, in a temporary
// directory that stop removes: call stop after m.Run. It returns an error
// instead of failing a test, since TestMain has none; and when the jar is
// not built and neither `make test` nor CI asks for it (see
// toolbin.RequireMain), skip, the one line to print before exiting 0
// without running the package's tests.
func StartMain() (s *Server, stop func(), skip string, err error) {
	return StartMainWith(Options{})
}

// StartMainWith is StartMain with o's settings.
func StartMainWith(o Options) (s *Server, stop func(), skip string, err error) {
	jar, skip, err := toolbin.RequireMain("nacostest", EnvJar, "nacos.sh")
	if skip != "" || err != nil {
		return nil, nil, skip, err
	}
	dir, err := os.MkdirTemp("", "nacostest-")
	if err != nil {
		return nil, nil, "", err
	}
	s, err = start(dir, jar, o)
	if err != nil {
		b, _ := os.ReadFile(filepath.Join(dir, "nacos.log"))
		if len(b) > 8000 {
			b = b[len(b)-8000:]
		}
		_ = os.RemoveAll(dir)
		return nil, nil, "", fmt.Errorf("%w\nserver log (tail):\n%s", err, b)
	}
	return s, func() { s.Stop(); _ = os.RemoveAll(dir) }, "", nil
}

// Start starts a server of its own for one test, in t.TempDir(); it is
// stopped when the test ends and its log printed if the test failed. It
// skips t when the jar is missing outside `make test` and CI
// (toolbin.Require).
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith is Start with o's settings.
func StartWith(t testing.TB, o Options) *Server {
	t.Helper()
	jar := toolbin.Require(t, "nacostest", EnvJar, "nacos.sh")
	s, err := start(t.TempDir(), jar, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(); toolbin.LogTail(t, s.LogPath(), "nacos log") })
	return s
}

func start(dir, jar string, o Options) (*Server, error) {
	secrets := []string{
		// Nacos wants a Base64 key of at least 32 bytes for its tokens.
		"-Dnacos.core.auth.plugin.nacos.token.secret.key=" + base64.StdEncoding.EncodeToString(randomBytes(32)),
		"-Dnacos.core.auth.server.identity.key=drainkit-" + hex.EncodeToString(randomBytes(4)),
		"-Dnacos.core.auth.server.identity.value=" + hex.EncodeToString(randomBytes(16)),
	}
	if o.Auth == FullAuth {
		secrets = append(secrets, "-Dnacos.core.auth.enabled=true")
	}
	var lastErr error
	for range 5 { // another process may take a port between the check and the bind
		port, err := freePorts()
		if err != nil {
			return nil, err
		}
		s := &Server{Port: port, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), jar: jar,
			home: filepath.Join(dir, "home"), Auth: o.Auth, AdminPassword: hex.EncodeToString(randomBytes(12)),
			secrets: secrets, shippedPush: o.ShippedPushDelay,
			proc: toolbin.Server{Name: "nacostest", What: "nacostest: nacos", LogPath: filepath.Join(dir, "nacos.log"),
				StartTimeout: StartTimeout, StopGrace: stopTimeout}}
		s.BaseURL = "http://" + s.Addr + "/nacos"
		if o.Auth == FullAuth {
			s.User, s.Password = ClientUser, hex.EncodeToString(randomBytes(12))
		}
		if lastErr = s.start(); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = crand.Read(b) // never fails (crypto/rand's documentation)
	return b
}

func (s *Server) start() error {
	args := []string{
		// Start-up speed over peak speed: C1 only and the serial collector
		// roughly halve the start on 2 cores; a test server serves little.
		"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xms128m", "-Xmx512m",
		"-Dnacos.home=" + s.home,
		// The server rebuilds a service's instance list (what the open API
		// answers and what it pushes) PushTaskDelay after a change, 500 ms by
		// default, to batch changes; the tests measure drainkit's part.
		"-Dnacos.server.main.port=" + strconv.Itoa(s.Port),
		"-Dnacos.logs.path=" + filepath.Join(s.home, "logs")}
	if !s.shippedPush {
		args = append(args, "-Dnacos.naming.push.pushTaskDelay="+strconv.Itoa(int(PushTaskDelay/time.Millisecond)))
	}
	args = append(append(args, s.secrets...), "-jar", s.jar)
	cmd := exec.Command("java", args...)
	// Derby writes derby.log into the working directory.
	if err := os.MkdirAll(s.home, 0o755); err != nil {
		return err
	}
	cmd.Dir = s.home
	began := time.Now()
	var logFrom int64
	if fi, err := os.Stat(s.LogPath()); err == nil {
		logFrom = fi.Size() // the log is appended across restarts
	}
	err := s.proc.Start(cmd, func(ctx context.Context, hc *http.Client) error {
		if failed := s.failedStart(logFrom); failed != "" {
			// Spring Boot reports a port it could not bind and keeps the
			// JVM alive: end it, so that start tries other ports now
			// rather than after StartTimeout.
			_ = s.proc.Signal(syscall.SIGKILL)
			return errors.New(failed)
		}
		if err := s.up(ctx, hc); err != nil {
			return err
		}
		return s.setUpUsers(ctx, hc)
	})
	if err == nil {
		s.StartupTime = time.Since(began)
		fmt.Fprintf(os.Stderr, "nacostest: Nacos server on %s up after %s\n", s.Addr, s.StartupTime.Round(time.Millisecond))
	}
	return err
}

// failedStart returns the line of the log written since offset from that
// says the server failed to start, or "".
func (s *Server) failedStart(from int64) string {
	f, err := os.Open(s.LogPath())
	if err != nil {
		return ""
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, from, 1<<30))
	if err != nil {
		return ""
	}
	for _, marker := range []string{"APPLICATION FAILED TO START", "Nacos failed to start"} {
		if i := bytes.Index(b, []byte(marker)); i >= 0 {
			line, _, _ := bytes.Cut(b[i:], []byte("\n"))
			return "nacostest: " + string(bytes.TrimSpace(line))
		}
	}
	return ""
}

// up reports nil once the naming open API answers (200, or 403 with
// FullAuth) and the gRPC port accepts connections.
func (s *Server) up(ctx context.Context, hc *http.Client) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		s.BaseURL+"/v1/ns/instance/list?serviceName=nacostest-probe", nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	// With FullAuth the list wants a token: a 403 is the API answering.
	if resp.StatusCode != http.StatusOK && (s.Auth != FullAuth || resp.StatusCode != http.StatusForbidden) {
		return fmt.Errorf("GET /v1/ns/instance/list: %s", resp.Status)
	}
	c, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port+GRPCOffset)))
	if err != nil {
		return err
	}
	return c.Close()
}

// setUpUsers creates AdminUser (and on a FullAuth server ClientUser with
// its role and permission) unless they exist, and reports nil once
// AdminUser can log in: Nacos reloads its users from the database every
// 15 s, so a new user logs in some seconds after its creation.
func (s *Server) setUpUsers(ctx context.Context, hc *http.Client) error {
	// The console's first login: creates AdminUser with ROLE_ADMIN; 409 once
	// there is an admin (a restart, or an earlier attempt).
	var r result
	if err := s.do(ctx, hc, http.MethodPost, "/v3/auth/user/admin", url.Values{"password": {s.AdminPassword}}, "", &r); err != nil &&
		!errors.Is(err, errConflict) {
		return err
	}
	tok, err := s.adminToken(ctx, hc)
	if err != nil || s.Auth != FullAuth {
		return err
	}
	if _, _, err := s.login(ctx, hc, s.User, s.Password); err == nil {
		return nil // set up by an earlier attempt or start
	}
	for _, step := range []struct {
		path string
		q    url.Values
	}{
		{"/v3/auth/user", url.Values{"username": {s.User}, "password": {s.Password}}},
		{"/v3/auth/role", url.Values{"role": {ClientRole}, "username": {s.User}}},
		{"/v3/auth/permission", url.Values{"role": {ClientRole}, "resource": {"public:*:*"}, "action": {"rw"}}},
	} {
		if err := s.do(ctx, hc, http.MethodPost, step.path, step.q, tok, &r); err != nil && !strings.Contains(err.Error(), "already") {
			return err
		}
	}
	_, _, err = s.login(ctx, hc, s.User, s.Password)
	return err
}

// result is a Nacos 3 API answer.
type result struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

var errConflict = errors.New("nacostest: conflict")

// do sends method path?q (with token as accessToken, if set) and decodes a
// 200's body into out.
func (s *Server) do(ctx context.Context, hc *http.Client, method, path string, q url.Values, token string, out any) error {
	if token != "" {
		q.Set("accessToken", token)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.BaseURL+path, strings.NewReader(q.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its URL may carry the token
		}
		return fmt.Errorf("nacostest: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusConflict:
		return fmt.Errorf("%w: %s %s: %.200s", errConflict, method, path, b)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("nacostest: %s %s: %s: %.200s", method, path, resp.Status, b)
	}
	return json.Unmarshal(b, out)
}

// Login logs user in (POST /v3/auth/user/login) and returns the access
// token, for the accessToken query parameter.
func (s *Server) Login(ctx context.Context, user, password string) (string, error) {
	tok, _, err := s.login(ctx, apiClient, user, password)
	return tok, err
}

// apiClient is the client of Login and AdminToken: no connection outlives
// a call (goleak).
var apiClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}

func (s *Server) login(ctx context.Context, hc *http.Client, user, password string) (string, time.Duration, error) {
	var r struct {
		AccessToken string `json:"accessToken"`
		TokenTTL    int64  `json:"tokenTtl"`
	}
	err := s.do(ctx, hc, http.MethodPost, "/v3/auth/user/login", url.Values{"username": {user}, "password": {password}}, "", &r)
	if err == nil && r.AccessToken == "" {
		err = fmt.Errorf("nacostest: login as %s: no accessToken", user)
	}
	return r.AccessToken, time.Duration(r.TokenTTL) * time.Second, err
}

// adminToken returns AdminUser's access token, logging in when there is
// none or it is about to expire.
func (s *Server) adminToken(ctx context.Context, hc *http.Client) (string, error) {
	s.mu.Lock()
	tok, exp := s.token, s.expires
	s.mu.Unlock()
	if tok != "" && time.Now().Before(exp) {
		return tok, nil
	}
	tok, ttl, err := s.login(ctx, hc, AdminUser, s.AdminPassword)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	s.token, s.expires = tok, time.Now().Add(ttl/2)
	s.mu.Unlock()
	return tok, nil
}

// AdminToken returns an access token of AdminUser, for the admin API
// (/v3/admin/*) as an operator calls it: the accessToken query parameter.
func (s *Server) AdminToken(ctx context.Context) (string, error) {
	return s.adminToken(ctx, apiClient)
}

// Stop stops the server (SIGTERM, then SIGKILL after 15s) and waits for it
// to exit; nacos.home stays. It is idempotent.
func (s *Server) Stop() { s.proc.Stop() }

// Restart starts a stopped server again on the same ports with the same
// nacos.home (stopping it first if it runs). It fails the test if the server
// does not come up.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.proc.Restart(t, s.start)
}

// Running reports whether the server process is running.
func (s *Server) Running() bool { return s.proc.Running() }

// LogPath is the file the server's console output goes to (appended across
// restarts); the server's own logs are under nacos.home/logs.
func (s *Server) LogPath() string { return s.proc.LogPath }

// Env returns the environment for a child process that should register in
// this server: NACOS_SERVER_ADDR=<Addr>, and on a FullAuth server User's
// credentials (DRAINKIT_REGISTRY_NACOS_USERNAME and _PASSWORD).
func (s *Server) Env() []string {
	env := []string{"NACOS_SERVER_ADDR=" + s.Addr}
	if s.User != "" {
		env = append(env, credentials(s.User, s.Password)...)
	}
	return env
}

// AdminEnv is Env with AdminUser's credentials: a child that reads the
// admin API (registry/nacos's read-back of an operator's offline).
func (s *Server) AdminEnv() []string {
	return append([]string{"NACOS_SERVER_ADDR=" + s.Addr}, credentials(AdminUser, s.AdminPassword)...)
}

func credentials(user, password string) []string {
	return []string{"DRAINKIT_REGISTRY_NACOS_USERNAME=" + user, "DRAINKIT_REGISTRY_NACOS_PASSWORD=" + password}
}

// freePorts returns an HTTP port P such that P, P-1000 (Raft), P+1000 (gRPC)
// and P+1001 (cluster gRPC) are all free on every interface, as Nacos binds
// them there.
func freePorts() (int, error) {
	for range 100 {
		p := 21000 + rand.IntN(30000)
		ok := true
		var held []net.Listener
		for _, q := range []int{p, p - 1000, p + 1000, p + 1001} {
			l, err := net.Listen("tcp", ":"+strconv.Itoa(q))
			if err != nil {
				ok = false
				break
			}
			held = append(held, l)
		}
		for _, l := range held {
			l.Close()
		}
		if ok {
			return p, nil
		}
	}
	return 0, fmt.Errorf("nacostest: no free port P with P-1000, P+1000 and P+1001 free after 100 tries")
}
