package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
)

// env is what every table shares: the quick flag, a scratch directory with
// the built binaries, and the repository root.
type env struct {
	quick bool
	root  string            // repository root (the working directory)
	dir   string            // scratch directory, removed by close
	bin   map[string]string // built on first use (ensureBuilt)
	built sync.Once
	err   error // the build's
}

// Binaries the drills run: the drainkit CLI, drainkit's example service
// and the three anchors.
const (
	binDrainkit = "drainkit"
	binExample  = "httpservice"
	binKratos   = "kratos"
	binGoZero   = "gozero"
	binPlain    = "plain"
)

func newEnv(quick bool) (*env, error) {
	root, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(root, "bench", "anchors", "go.mod")); err != nil {
		return nil, fmt.Errorf("run me from the repository root (no bench/anchors/go.mod here): %w", err)
	}
	dir, err := os.MkdirTemp("", "drainkit-bench-")
	if err != nil {
		return nil, err
	}
	return &env{quick: quick, root: root, dir: dir, bin: map[string]string{}}, nil
}

func (e *env) close() { _ = os.RemoveAll(e.dir) }

func (e *env) mode() string {
	if e.quick {
		return "quick mode: reduced sizes, timings not asserted"
	}
	return "full run"
}

// ensureBuilt builds the binaries once, for the tables that drill.
func (e *env) ensureBuilt() error {
	e.built.Do(func() { e.err = e.build() })
	return e.err
}

// build compiles the binaries: the main module's with `go build`, the
// anchors' with `go build -C bench/anchors` (their own module).
func (e *env) build() error {
	if err := e.goBuild("", "./cmd/drainkit", "./examples/httpservice"); err != nil {
		return err
	}
	if err := e.goBuild("bench/anchors", "./kratos", "./gozero", "./plain"); err != nil {
		return err
	}
	for _, b := range []string{binDrainkit, binExample, binKratos, binGoZero, binPlain} {
		e.bin[b] = filepath.Join(e.dir, b)
	}
	return nil
}

func (e *env) goBuild(chdir string, pkgs ...string) error {
	args := []string{"build"}
	if chdir != "" {
		args = append([]string{"build", "-C", chdir}, args[1:]...)
	}
	args = append(append(args, "-o", e.dir+"/"), pkgs...)
	cmd := exec.Command("go", args...)
	if chdir != "" {
		// A module of its own, outside the root's go.work: built alone,
		// so its requirements never mix with the workspace's.
		cmd.Env = append(os.Environ(), "GOWORK=off")
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	fmt.Fprintf(os.Stderr, "benchrun: go %s\n", strings.Join(args, " "))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// machine describes the machine, the Go version and the load at the start.
func machine() string {
	var b strings.Builder
	b.WriteString("Machine:\n\n")
	fmt.Fprintf(&b, "- CPU: %s, %d logical CPUs (GOMAXPROCS %d)\n", cpuModel(), runtime.NumCPU(), runtime.GOMAXPROCS(0))
	var u syscall.Utsname
	if syscall.Uname(&u) == nil {
		fmt.Fprintf(&b, "- kernel: %s %s\n", utsString(u.Sysname[:]), utsString(u.Release[:]))
	}
	fmt.Fprintf(&b, "- memory: %s\n", firstLine("/proc/meminfo"))
	fmt.Fprintf(&b, "- Go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&b, "- load average at start: %s\n\n", firstLine("/proc/loadavg"))
	return b.String()
}

func cpuModel() string {
	data, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func firstLine(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	l, _, _ := strings.Cut(string(data), "\n")
	return strings.Join(strings.Fields(l), " ")
}

func utsString(a []int8) string {
	var b strings.Builder
	for _, c := range a {
		if c == 0 {
			break
		}
		b.WriteByte(byte(c))
	}
	return b.String()
}

// raiseNoFile raises the soft RLIMIT_NOFILE to the hard limit: the scale
// table holds more than 10,000 connections at once.
func raiseNoFile() {
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r) == nil && r.Cur < r.Max {
		r.Cur = r.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r)
	}
}

// noFile returns the soft RLIMIT_NOFILE.
func noFile() uint64 {
	var r syscall.Rlimit
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r)
	return r.Cur
}
