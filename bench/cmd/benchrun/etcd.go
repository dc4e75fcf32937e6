package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// etcdServer is a real one-member etcd server on free loopback ports with a
// temporary data directory, as registry/etcd/etcdtest starts one for the tests
// (which needs a testing.TB).
type etcdServer struct {
	Endpoint string // "127.0.0.1:<client port>"
	dir      string // data directory and log, removed by stop
	cmd      *exec.Cmd
	exited   chan struct{}
}

// etcdBinary returns $DRAINKIT_ETCD_BIN, else the path scripts/etcd.sh
// caches the binary at, or "" when neither exists.
func etcdBinary() string {
	for _, p := range []string{os.Getenv("DRAINKIT_ETCD_BIN"), filepath.Join(os.Getenv("HOME"), ".cache", "drainkit", "etcd-3.7.3")} {
		if p == "" {
			continue
		}
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	return ""
}

// startEtcd starts a member and waits until GET /health reports it healthy
// (it elected itself leader and serves reads).
func startEtcd(bin string) (*etcdServer, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "drainkit-bench-etcd-")
	if err != nil {
		return nil, err
	}
	s := &etcdServer{Endpoint: "127.0.0.1:" + strconv.Itoa(ports[0]), dir: dir, exited: make(chan struct{})}
	if err := s.start(bin, "http://127.0.0.1:"+strconv.Itoa(ports[1])); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := s.waitHealthy(30 * time.Second); err != nil {
		err = fmt.Errorf("%w; log tail:\n%s", err, s.logTail())
		s.stop()
		return nil, err
	}
	return s, nil
}

func (s *etcdServer) start(bin, peerURL string) error {
	logf, err := os.Create(filepath.Join(s.dir, "etcd.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	clientURL, name := "http://"+s.Endpoint, "drainkit-bench"
	s.cmd = exec.Command(bin, "--name", name, "--data-dir", filepath.Join(s.dir, "data"),
		"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", name+"="+peerURL, "--initial-cluster-state", "new",
		"--log-level", "warn",
		"--unsafe-no-fsync", // like Consul's -dev agent (in memory): the shared disk stays out of the figures
	)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.Env = withoutEtcdEnv(os.Environ())
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("etcd server %s: %w", bin, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	return nil
}

// withoutEtcdEnv drops ETCD_* variables, which etcd reads as flags.
func withoutEtcdEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "ETCD") {
			out = append(out, kv)
		}
	}
	return out
}

func (s *etcdServer) waitHealthy(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.Endpoint+"/health", nil)
		if resp, err := hc.Do(req); err == nil {
			var h struct{ Health string }
			derr := json.NewDecoder(resp.Body).Decode(&h)
			_ = resp.Body.Close()
			if derr == nil && resp.StatusCode == http.StatusOK && h.Health == "true" {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("etcd server exited before it was healthy")
		case <-ctx.Done():
			return fmt.Errorf("etcd server: not healthy within %s", timeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *etcdServer) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "etcd.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// clientConfig is a client configuration for the member, without the
// client's own logging.
func (s *etcdServer) clientConfig() clientv3.Config {
	return clientv3.Config{Endpoints: []string{s.Endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
}

// stop stops the member (SIGTERM, then SIGKILL after 5s), waits for it and
// removes its data directory.
func (s *etcdServer) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	_ = os.RemoveAll(s.dir)
}
