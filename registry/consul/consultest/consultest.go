// Package consultest runs a real Consul agent for tests: `consul agent -dev`
// on free loopback ports, stopped when the test ends. The binary comes from
// $DRAINKIT_CONSUL_BIN (set by `make test`) or, when that is unset, from
// scripts/consul.sh at the module root, which builds it once into a cache.
// In a plain `go test` without the variable and with nothing built yet the
// test is skipped with one line naming `make test`; with CI set it never
// is: it fails (internal/toolbin.Require).
//
// A dev agent keeps all state in memory: Restart gives a fresh agent on the
// same ports, as after a crash of a real agent that lost its state.
//
// It lives in the module whose tests use it, not in a module of its own, so
// that a program importing registry/consul needs no test-only module (issue 33);
// it is drainkit's own test harness, and its API may change in any release.
package consultest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/toolbin"
	"github.com/hashicorp/consul/api"
)

// EnvBinary is the environment variable naming the consul binary.
const EnvBinary = "DRAINKIT_CONSUL_BIN"

// StartTimeout bounds how long Start and Restart wait for the agent to elect
// itself leader and register its node.
const StartTimeout = 30 * time.Second

// Agent is one running (or stopped) dev agent. Its methods are safe for
// concurrent use.
type Agent struct {
	// HTTPAddr is the agent's HTTP API address, "127.0.0.1:<port>"; the
	// value for CONSUL_HTTP_ADDR.
	HTTPAddr string
	// Node is the agent's node name.
	Node string

	bin   string
	ports ports
	proc  toolbin.Server // the process; its closers close Client's idle connections
}

type ports struct{ http, server, serfLAN, serfWAN int }

// Binary returns the path of the consul binary for t: $DRAINKIT_CONSUL_BIN
// if set, else the path printed by <module root>/scripts/consul.sh (which,
// with CI set, may build it first, taking minutes). Without the variable
// and outside CI it skips t when nothing is built yet (toolbin.Require).
//
// Binary and Start are shaped like registry/etcd/etcdtest's (the lookup and its
// t.Fatal stay in each Start): the shared steps are internal/toolbin's
// (Path, Server, LogTail); the flags, ports, environment, stop signal,
// cleanup order and readiness check differ.
func Binary(t testing.TB) string {
	t.Helper()
	return toolbin.Require(t, "consultest", EnvBinary, "consul.sh")
}

// Start starts a dev agent on free loopback ports and waits until it is
// leader and its node is in the catalog. It fails the test if the binary
// cannot be obtained (or skips it, see Binary) or the agent does not come
// up within StartTimeout. The agent is stopped when the test ends; its log
// is printed if the test failed.
func Start(t testing.TB) *Agent {
	t.Helper()
	bin := Binary(t)
	p, err := freePorts()
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{
		HTTPAddr: net.JoinHostPort("127.0.0.1", strconv.Itoa(p.http)),
		Node:     "consultest-" + strconv.Itoa(p.http),
		bin:      bin,
		ports:    p,
		proc: toolbin.Server{Name: "consultest", What: "consultest: agent",
			LogPath: filepath.Join(t.TempDir(), "consul.log"), StartTimeout: StartTimeout},
	}
	t.Cleanup(func() {
		a.Stop() // before the clients: unlike etcdtest's order
		a.proc.CloseClients()
		toolbin.LogTail(t, a.proc.LogPath, "consul agent log")
	})
	if err := a.start(); err != nil {
		t.Fatal(err)
	}
	return a
}

func (a *Agent) start() error {
	cmd := exec.Command(a.bin, "agent", "-dev",
		"-bind", "127.0.0.1", "-client", "127.0.0.1",
		"-node", a.Node,
		"-http-port", strconv.Itoa(a.ports.http),
		"-server-port", strconv.Itoa(a.ports.server),
		"-serf-lan-port", strconv.Itoa(a.ports.serfLAN),
		"-serf-wan-port", strconv.Itoa(a.ports.serfWAN),
		"-dns-port", "-1", "-grpc-port", "-1", "-grpc-tls-port", "-1", "-https-port", "-1",
		"-log-level", "info",
	)
	cmd.Env = append(os.Environ(), "CONSUL_HTTP_ADDR=") // don't let the agent pick up a caller's address
	return a.proc.Start(cmd, a.up)
}

// up reports nil once the agent has a leader and its node is in the catalog.
func (a *Agent) up(ctx context.Context, hc *http.Client) error {
	leader, err := get(ctx, hc, "http://"+a.HTTPAddr+"/v1/status/leader")
	if err != nil {
		return err
	}
	if leader == `""` {
		return errors.New("no leader yet")
	}
	node, err := get(ctx, hc, "http://"+a.HTTPAddr+"/v1/catalog/node/"+a.Node)
	if err != nil {
		return err
	}
	if node == "null" {
		return errors.New("node not in the catalog yet")
	}
	return nil
}

func get(ctx context.Context, hc *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return strings.TrimSpace(b.String()), nil
}

// Stop kills the agent (SIGKILL: a dev agent has nothing to save) and waits
// for it to exit. It is idempotent; the test's cleanup calls it too.
func (a *Agent) Stop() { a.proc.Stop() }

// Restart stops the agent and starts a fresh one on the same ports: all
// services, checks and indexes are gone, as after an agent crash that lost
// its state. It fails the test if the new agent does not come up.
func (a *Agent) Restart(t testing.TB) {
	t.Helper()
	a.proc.Restart(t, a.start)
}

// Running reports whether the agent process is running.
func (a *Agent) Running() bool { return a.proc.Running() }

// Config returns a new consul/api config for the agent: api.DefaultConfig
// with Address set to HTTPAddr.
func (a *Agent) Config() *api.Config {
	cfg := api.DefaultConfig()
	cfg.Address = a.HTTPAddr
	return cfg
}

// Client returns a consul/api client for the agent. Its idle connections are
// closed when the test ends, so goleak stays quiet.
func (a *Agent) Client(t testing.TB) *api.Client {
	t.Helper()
	cfg := a.Config()
	c, err := api.NewClient(cfg) // sets cfg.HttpClient
	if err != nil {
		t.Fatal(err)
	}
	a.proc.AddCloser(cfg.HttpClient.CloseIdleConnections)
	return c
}

// Env returns the environment for a child process that should use this agent:
// CONSUL_HTTP_ADDR=<HTTPAddr>.
func (a *Agent) Env() []string { return []string{"CONSUL_HTTP_ADDR=" + a.HTTPAddr} }

// LogPath is the file the agent's output goes to (appended across restarts).
func (a *Agent) LogPath() string { return a.proc.LogPath }

// Pause stops the agent process with SIGSTOP: it keeps its sockets open but
// answers nothing, as a hung agent does. Resume continues it; Stop kills it
// either way.
func (a *Agent) Pause() error { return a.proc.Signal(syscall.SIGSTOP) }

// Resume continues an agent stopped by Pause (SIGCONT).
func (a *Agent) Resume() error { return a.proc.Signal(syscall.SIGCONT) }
