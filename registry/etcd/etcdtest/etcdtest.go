// Package etcdtest runs a real etcd server for tests: one member on free
// loopback ports with a temporary data directory, stopped when the test ends.
// The binary comes from $DRAINKIT_ETCD_BIN (set by `make race`) or, when that
// is unset, from scripts/etcd.sh at the module root, which builds it once into
// a cache. A test that cannot obtain the binary fails; it is never skipped.
//
// Stop and Restart keep the data directory (keys, leases and revisions
// survive, as after a clean restart of a real member); RestartWiped starts a
// new cluster on the same ports with an empty data directory, as after a
// member lost its disk: every key and lease is gone and revisions start over.
//
// It lives in the module whose tests use it, not in a module of its own, so
// that a program importing registry/etcd needs no test-only module (issue 33);
// it is drainkit's own test harness, and its API may change in any release.
package etcdtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/toolbin"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// EnvBinary is the environment variable naming the etcd binary.
const EnvBinary = "DRAINKIT_ETCD_BIN"

// StartTimeout bounds how long Start and the restarts wait for the member to
// elect itself leader and answer GET /health with {"health":"true"}.
const StartTimeout = 30 * time.Second

// stopTimeout is how long Stop waits after SIGTERM before SIGKILL.
const stopTimeout = 5 * time.Second

// Server is one etcd member, running or stopped. Its methods are safe for
// concurrent use.
type Server struct {
	// Endpoint is the client address, "127.0.0.1:<port>": the value for
	// ETCD_ENDPOINTS and clientv3.Config.Endpoints.
	Endpoint string
	// ClientURL is "http://" + Endpoint.
	ClientURL string

	bin     string
	name    string
	peerURL string
	dataDir string
	proc    toolbin.Server // the process; its closers close Client's clients
}

// Binary returns the path of the etcd binary for t: $DRAINKIT_ETCD_BIN if
// set, else the path printed by <module root>/scripts/etcd.sh (which, with
// CI set, may build it first, taking minutes). Without the variable and
// outside CI it skips t when nothing is built yet (toolbin.Require).
//
// Binary and Start are shaped like registry/consul/consultest's; the shared steps
// are internal/toolbin's (Path, Server, LogTail).
func Binary(t testing.TB) string {
	t.Helper()
	return toolbin.Require(t, "etcdtest", EnvBinary, "etcd.sh")
}

// Start starts a member on free loopback ports with a new data directory in
// t.TempDir() and waits until it is healthy. It fails the test if the binary
// cannot be obtained (or skips it, see Binary) or the member does not come
// up within StartTimeout. The member is stopped and the clients from Client are
// closed when the test ends; the member's log is printed if the test failed.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	clientPort, peerPort, err := freePorts()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := &Server{
		Endpoint: net.JoinHostPort("127.0.0.1", strconv.Itoa(clientPort)),
		bin:      bin,
		name:     "etcdtest-" + strconv.Itoa(clientPort),
		peerURL:  "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(peerPort)),
		dataDir:  filepath.Join(dir, "data"),
		proc: toolbin.Server{Name: "etcdtest", What: "etcdtest: etcd", LogPath: filepath.Join(dir, "etcd.log"),
			StartTimeout: StartTimeout, StopGrace: stopTimeout},
	}
	s.ClientURL = "http://" + s.Endpoint
	t.Cleanup(func() { s.cleanup(t) })
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *Server) cleanup(t testing.TB) {
	s.proc.CloseClients() // before the member stops: unlike consultest's order
	s.Stop()
	toolbin.LogTail(t, s.proc.LogPath, "etcd log")
}

func (s *Server) start() error {
	cmd := exec.Command(s.bin,
		"--name", s.name,
		"--data-dir", s.dataDir,
		"--listen-client-urls", s.ClientURL,
		"--advertise-client-urls", s.ClientURL,
		"--listen-peer-urls", s.peerURL,
		"--initial-advertise-peer-urls", s.peerURL,
		"--initial-cluster", s.name+"="+s.peerURL,
		"--initial-cluster-state", "new",
		"--log-level", "warn",
		"--unsafe-no-fsync", // test data; keeps a busy machine's disk out of the timings
	)
	cmd.Env = withoutEtcdEnv(os.Environ()) // ETCD_* variables are etcd flags
	return s.proc.Start(cmd, s.healthy)
}

func withoutEtcdEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "ETCD") {
			out = append(out, kv)
		}
	}
	return out
}

// healthy reports nil once GET /health says the member is healthy (it has a
// leader and serves reads).
func (s *Server) healthy(ctx context.Context, hc *http.Client) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.ClientURL+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var h struct{ Health string }
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		return fmt.Errorf("GET /health: %s: %w", resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK || h.Health != "true" {
		return fmt.Errorf("GET /health: %s, health %q", resp.Status, h.Health)
	}
	return nil
}

// Stop stops the member (SIGTERM, then SIGKILL after 5s) and waits for it to
// exit; the data directory stays. It is idempotent; the test's cleanup calls
// it too.
func (s *Server) Stop() { s.proc.Stop() }

// Restart stops the member and starts it again on the same ports with the
// same data directory: keys, leases (their TTLs restart) and revisions
// survive. It fails the test if the member does not come up.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.proc.Restart(t, s.start)
}

// RestartWiped stops the member, removes its data directory and starts a new
// cluster on the same ports: every key and lease is gone and revisions start
// again from 1. It fails the test if the member does not come up.
func (s *Server) RestartWiped(t testing.TB) {
	t.Helper()
	s.proc.Restart(t, func() error {
		if err := os.RemoveAll(s.dataDir); err != nil {
			return err
		}
		return s.start()
	})
}

// Running reports whether the member process is running (started and not
// stopped).
func (s *Server) Running() bool { return s.proc.Running() }

// Config returns a clientv3 configuration for the member: Endpoint, a 5s dial
// timeout and a logger that drops the client's own logging.
func (s *Server) Config() clientv3.Config {
	return clientv3.Config{Endpoints: []string{s.Endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
}

// Client returns a new client for the member, closed when the test ends (so
// goleak stays quiet).
func (s *Server) Client(t testing.TB) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(s.Config())
	if err != nil {
		t.Fatal(err)
	}
	s.proc.AddCloser(func() { _ = c.Close() })
	return c
}

// Env returns the environment for a child process that should register in
// this member: ETCD_ENDPOINTS=<Endpoint>.
func (s *Server) Env() []string { return []string{"ETCD_ENDPOINTS=" + s.Endpoint} }

// LogPath is the file the member's output goes to (appended across restarts).
func (s *Server) LogPath() string { return s.proc.LogPath }

// freePorts picks two distinct free loopback TCP ports, holding both
// listeners until both are chosen. Another process could still take one
// before etcd binds it, which then shows as a failed start.
func freePorts() (client, peer int, err error) {
	a, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, err
	}
	defer a.Close()
	b, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, err
	}
	defer b.Close()
	return a.Addr().(*net.TCPAddr).Port, b.Addr().(*net.TCPAddr).Port, nil
}
