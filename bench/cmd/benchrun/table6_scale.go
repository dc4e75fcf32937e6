package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// scaleRun is one drain at scale of one server mode.
type scaleRun struct {
	baseKB, connsKB, peakKB float64 // RSS before the connections, with them, peak (VmHWM)
	exit                    time.Duration
	lost                    int
}

// tableScale is table 6: a drain with idle keep-alive connections open and
// requests in flight, drainkit against plain net/http holding the same
// connections, each server a child process of its own.
func tableScale(e *env) (*Table, error) {
	idle, inflight, repeats, work := 10000, 1000, 3, 4*time.Second
	if e.quick {
		idle, inflight, repeats, work = 1000, 100, 1, 2*time.Second
	}
	if need := uint64(idle + inflight + 200); noFile() < need {
		return nil, fmt.Errorf("RLIMIT_NOFILE is %d, need %d (raise the hard limit: ulimit -Hn)", noFile(), need)
	}
	runs := map[string][]scaleRun{}
	for range repeats {
		for _, mode := range []string{"drainkit", "plain"} {
			r, err := scaleOnce(mode, idle, inflight, work)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", mode, err)
			}
			runs[mode] = append(runs[mode], r)
		}
	}
	t := &Table{Num: 6, Title: fmt.Sprintf("Scale: drain with %d idle keep-alive connections and %d requests in flight", idle, inflight),
		Command: "go run ./bench/cmd/benchrun -only 6",
		Header:  []string{"server", "peak RSS MiB", "time to exit s", "exit - plain's, s", "lost", "RSS per connection B", "per connection - net/http's, B"}}
	addScaleRows(e, t, runs, idle)
	t.Note("Each server is a child process (benchrun scale-server): drainkit is lifecycle + httpdrain without a propagation window, plain is http.Server.Shutdown on SIGTERM. The client opens the idle connections (one request each, then kept open), then the in-flight requests (/work, %s each), then sends SIGTERM.", work)
	t.Note("RSS per connection: (VmRSS with the idle connections - VmRSS before) / connections; its difference is paired per repeat against plain net/http's. Time to exit: SIGTERM to the process's exit. Lost: in-flight requests without a 200 answer.")
	return t, nil
}

func addScaleRows(e *env, t *Table, runs map[string][]scaleRun, idle int) {
	per, exit := map[string]Sample{}, map[string]Sample{}
	for mode, rs := range runs {
		for _, r := range rs {
			per[mode] = append(per[mode], (r.connsKB-r.baseKB)*1024/float64(idle))
			exit[mode] = append(exit[mode], r.exit.Seconds())
		}
	}
	for _, mode := range []string{"drainkit", "plain"} {
		var peak, lost Sample
		for _, r := range runs[mode] {
			peak, lost = append(peak, r.peakKB/1024), append(lost, float64(r.lost))
		}
		target, v, perDiff, exitDiff := NoTgt, NoTgt, "baseline", "baseline"
		if mode == "drainkit" {
			d := per["drainkit"].Diff(per["plain"])
			perDiff, exitDiff = d.Fmt("%+.0f"), exit["drainkit"].Diff(exit["plain"]).Fmt("%+.3f")
			target, v = "0 lost, < 1024 B per connection extra", verdict(lost.Max() == 0 && d.Median() < 1024)
		}
		name := map[string]string{"drainkit": "drainkit (httpdrain)", "plain": "plain net/http"}[mode]
		t.Add(e.quick, target, v, name, peak.Fmt("%.1f"), exit[mode].Fmt("%.3f"), exitDiff, lost.Fmt("%.0f"), per[mode].Fmt("%.0f"), perDiff)
	}
}

// scaleOnce starts a server child, opens the connections, drains it.
func scaleOnce(mode string, idle, inflight int, work time.Duration) (scaleRun, error) {
	var r scaleRun
	self, err := os.Executable()
	if err != nil {
		return r, err
	}
	cmd := exec.Command(self, scaleServerCmd, "-mode", mode, "-inflight", strconv.Itoa(inflight))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return r, err
	}
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return r, err
	}
	defer func() { _ = cmd.Process.Kill() }()
	lines := readLines(bufio.NewScanner(out))
	addr, err := expectLine(lines, "listening ")
	if err != nil {
		return r, err
	}
	return drainAtScale(cmd, lines, addr, idle, inflight, work)
}

func drainAtScale(cmd *exec.Cmd, lines <-chan string, addr string, idle, inflight int, work time.Duration) (scaleRun, error) {
	var r scaleRun
	pid := cmd.Process.Pid
	r.baseKB = procStatusKB(pid, "VmRSS")
	conns, err := openIdle(addr, idle)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	if err != nil {
		return r, err
	}
	r.connsKB = procStatusKB(pid, "VmRSS")
	var lost atomic.Int64
	var wg sync.WaitGroup
	for range inflight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !getOK(addr, "/work?d="+work.String(), nil) {
				lost.Add(1)
			}
		}()
	}
	if _, err := expectLine(lines, "inflight "); err != nil {
		return r, err
	}
	r.peakKB = procStatusKB(pid, "VmHWM")
	t0 := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return r, err
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	r.peakKB = max(r.peakKB, watchPeak(pid, waitErr))
	r.exit = time.Since(t0)
	wg.Wait()
	r.lost = int(lost.Load())
	return r, nil
}

// watchPeak reads VmHWM every 20 ms until the process exits.
func watchPeak(pid int, exited <-chan error) float64 {
	peak := 0.0
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-exited:
			return peak
		case <-tick.C:
			peak = max(peak, procStatusKB(pid, "VmHWM"))
		}
	}
}

// expectLine waits up to a minute for the child's next line starting with
// prefix and returns the rest of it.
func expectLine(lines <-chan string, prefix string) (string, error) {
	timeout := time.After(time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return "", fmt.Errorf("scale server exited before printing %q", prefix)
			}
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				return rest, nil
			}
		case <-timeout:
			return "", fmt.Errorf("scale server: no %q line within a minute", prefix)
		}
	}
}

// readLines delivers sc's lines on a channel, closed at EOF.
func readLines(sc *bufio.Scanner) <-chan string {
	c := make(chan string, 16)
	go func() {
		defer close(c)
		for sc.Scan() {
			c <- sc.Text()
		}
	}()
	return c
}

// procStatusKB reads a kB field of /proc/PID/status (0 if unreadable).
func procStatusKB(pid int, field string) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				v, _ := strconv.ParseFloat(f[0], 64)
				return v
			}
		}
	}
	return 0
}

// openIdle opens n connections, each with one answered keep-alive request
// (so the server tracks it as idle), 64 at a time.
func openIdle(addr string, n int) ([]net.Conn, error) {
	conns := make([]net.Conn, n)
	var failed atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			c, err := net.DialTimeout("tcp", addr, 10*time.Second)
			if err != nil || !getOK(addr, "/", c) {
				failed.Add(1)
				return
			}
			conns[i] = c
		}()
	}
	wg.Wait()
	out := conns[:0]
	for _, c := range conns {
		if c != nil {
			out = append(out, c)
		}
	}
	if f := failed.Load(); f > 0 {
		return out, fmt.Errorf("%d of %d idle connections could not be opened", f, n)
	}
	return out, nil
}

// getOK sends GET path on c (a new connection if nil, closed after) and
// reports whether it answered 200 with its whole body.
func getOK(addr, path string, c net.Conn) bool {
	if c == nil {
		var err error
		if c, err = net.DialTimeout("tcp", addr, 10*time.Second); err != nil {
			return false
		}
		defer c.Close()
	}
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	defer func() { _ = c.SetDeadline(time.Time{}) }()
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, addr); err != nil {
		return false
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err == nil && resp.StatusCode == http.StatusOK
}
