package httpdrain_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// The idle keep-alive connections of BenchmarkQuiescence are held by a
// child process (this test binary, re-executed): 10,000 connections take
// 20,000 descriptors when both ends are in one process, the limit here.
const (
	idleHolderEnv   = "HTTPDRAIN_IDLE_HOLDER_ADDR"
	idleHolderCount = "HTTPDRAIN_IDLE_HOLDER_CONNS"
)

// idleHolderMain is the child: it opens the connections, sends one request
// on each and reads its response, so that each is an idle keep-alive
// connection on the server; prints "ready"; and holds them until its stdin
// closes.
func idleHolderMain(addr string) int {
	n, err := strconv.Atoi(os.Getenv(idleHolderCount))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_, err = io.WriteString(c, "GET /idle HTTP/1.1\r\nHost: x\r\n\r\n")
		}
		if err == nil {
			var resp *http.Response
			if resp, err = http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "idle holder:", err)
			return 1
		}
		conns = append(conns, c)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	for _, c := range conns {
		c.Close()
	}
	return 0
}

// holdIdle starts a child holding n idle keep-alive connections to addr and
// returns once they are all established; release ends the child.
func holdIdle(b *testing.B, addr string, n int) (release func()) {
	b.Helper()
	if n == 0 {
		return func() {}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), idleHolderEnv+"="+addr, idleHolderCount+"="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		stdin.Close()
		_ = cmd.Wait()
		b.Fatalf("idle holder: %q, %v", line, err)
	}
	return func() {
		stdin.Close()
		_ = cmd.Wait()
	}
}
