// Package nacostest runs a real Nacos server for tests: one standalone node
// (naming and config, embedded Derby, authentication off) on free ports with
// a temporary nacos.home, stopped when the test ends. The server is the jar
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
// Stop and Restart keep nacos.home: the Derby database (persistent instances,
// namespaces, operators' instance settings kept there) survives, while
// ephemeral instances, which live in the server's memory and belong to their
// clients' connections, are gone until their clients register them again.
package nacostest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

	jar  string
	home string
	proc toolbin.Server
}

// StartMain starts a server for a package's TestMain, in a temporary
// directory that stop removes: call stop after m.Run. It returns an error
// instead of failing a test, since TestMain has none; and when the jar is
// not built and neither `make test` nor CI asks for it (see
// toolbin.RequireMain), skip, the one line to print before exiting 0
// without running the package's tests.
func StartMain() (s *Server, stop func(), skip string, err error) {
	jar, skip, err := toolbin.RequireMain("nacostest", EnvJar, "nacos.sh")
	if skip != "" || err != nil {
		return nil, nil, skip, err
	}
	dir, err := os.MkdirTemp("", "nacostest-")
	if err != nil {
		return nil, nil, "", err
	}
	s, err = start(dir, jar)
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
	jar := toolbin.Require(t, "nacostest", EnvJar, "nacos.sh")
	s, err := start(t.TempDir(), jar)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(); toolbin.LogTail(t, s.LogPath(), "nacos log") })
	return s
}

func start(dir, jar string) (*Server, error) {
	var lastErr error
	for range 5 { // another process may take a port between the check and the bind
		port, err := freePorts()
		if err != nil {
			return nil, err
		}
		s := &Server{Port: port, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), jar: jar,
			home: filepath.Join(dir, "home"),
			proc: toolbin.Server{Name: "nacostest", What: "nacostest: nacos", LogPath: filepath.Join(dir, "nacos.log"),
				StartTimeout: StartTimeout, StopGrace: stopTimeout}}
		s.BaseURL = "http://" + s.Addr + "/nacos"
		if lastErr = s.start(); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

func (s *Server) start() error {
	cmd := exec.Command("java",
		// Start-up speed over peak speed: C1 only and the serial collector
		// roughly halve the start on 2 cores; a test server serves little.
		"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xms128m", "-Xmx512m",
		"-Dnacos.home="+s.home,
		// The server rebuilds a service's instance list (what the open API
		// answers and what it pushes) PushTaskDelay after a change, 500 ms by
		// default, to batch changes; the tests measure drainkit's part.
		"-Dnacos.naming.push.pushTaskDelay="+strconv.Itoa(int(PushTaskDelay/time.Millisecond)),
		"-Dnacos.server.main.port="+strconv.Itoa(s.Port),
		"-Dnacos.logs.path="+filepath.Join(s.home, "logs"),
		"-jar", s.jar)
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
		return s.up(ctx, hc)
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

// up reports nil once the naming open API answers 200 and the gRPC port
// accepts connections.
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
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /v1/ns/instance/list: %s", resp.Status)
	}
	c, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port+GRPCOffset)))
	if err != nil {
		return err
	}
	return c.Close()
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
// this server: NACOS_SERVER_ADDR=<Addr>.
func (s *Server) Env() []string { return []string{"NACOS_SERVER_ADDR=" + s.Addr} }

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
