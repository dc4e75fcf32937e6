package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// consulAgent is a real Consul dev agent on free loopback ports, as
// registry/consul/consultest starts one for the tests (which needs a testing.TB).
type consulAgent struct {
	HTTPAddr string
	cmd      *exec.Cmd
	exited   chan struct{}
}

// consulBinary returns $DRAINKIT_CONSUL_BIN, else the integrator's cache
// path, or "" when neither exists.
func consulBinary() string {
	for _, p := range []string{os.Getenv("DRAINKIT_CONSUL_BIN"), filepath.Join(os.Getenv("HOME"), ".cache", "drainkit", "consul-1.14.0")} {
		if p == "" {
			continue
		}
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	return ""
}

// startConsul starts a dev agent and waits until it has a leader.
func startConsul(bin string) (*consulAgent, error) {
	ports, err := freePorts(4)
	if err != nil {
		return nil, err
	}
	a := &consulAgent{HTTPAddr: "127.0.0.1:" + strconv.Itoa(ports[0]), exited: make(chan struct{})}
	a.cmd = exec.Command(bin, "agent", "-dev", "-bind", "127.0.0.1", "-client", "127.0.0.1",
		"-http-port", strconv.Itoa(ports[0]), "-server-port", strconv.Itoa(ports[1]),
		"-serf-lan-port", strconv.Itoa(ports[2]), "-serf-wan-port", strconv.Itoa(ports[3]),
		"-dns-port", "-1", "-grpc-port", "-1", "-grpc-tls-port", "-1", "-https-port", "-1", "-log-level", "warn")
	a.cmd.Stdout, a.cmd.Stderr = io.Discard, io.Discard
	a.cmd.Env = append(os.Environ(), "CONSUL_HTTP_ADDR=")
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := a.cmd.Start(); err != nil {
		return nil, fmt.Errorf("consul agent %s: %w", bin, err)
	}
	go func() { _ = a.cmd.Wait(); close(a.exited) }()
	if err := a.waitLeader(30 * time.Second); err != nil {
		a.stop()
		return nil, err
	}
	return a, nil
}

func (a *consulAgent) waitLeader(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+a.HTTPAddr+"/v1/status/leader", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if s := strings.TrimSpace(string(b)); s != "" && s != `""` {
				return nil
			}
		}
		select {
		case <-a.exited:
			return fmt.Errorf("consul agent exited before it had a leader")
		case <-ctx.Done():
			return fmt.Errorf("consul agent: no leader within %s", timeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (a *consulAgent) stop() {
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.exited:
	case <-time.After(5 * time.Second):
		_ = a.cmd.Process.Kill()
		<-a.exited
	}
}

// freePorts returns n distinct free loopback ports.
func freePorts(n int) ([]int, error) {
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			_ = l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
