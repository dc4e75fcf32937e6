package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/drainkit/drainkit/internal/childtest"
)

var consumerBin, serviceBin string

func TestMain(m *testing.M) {
	var rm1, rm2 func()
	var err error
	if consumerBin, rm1, err = childtest.Build("github.com/drainkit/drainkit/examples/consumer"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if serviceBin, rm2, err = childtest.Build("github.com/drainkit/drainkit/examples/httpservice"); err != nil {
		rm1()
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		rm1()
		rm2()
		os.Exit(code)
	}))
}

func get(t *testing.T, c *childtest.Child, path string) (int, string) {
	t.Helper()
	resp, err := c.Client.Get("http://" + c.HTTP + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The example forwards to two httpservice processes; after one is killed
// (SIGKILL: nothing drains), every request still succeeds and the dead one
// is ejected.
func TestForwardsThroughKill(t *testing.T) {
	a := childtest.Start(t, serviceBin, nil)
	b := childtest.Start(t, serviceBin, nil)
	c := childtest.Start(t, consumerBin, nil, "--targets", a.HTTP+","+b.HTTP)
	for i := range 10 {
		if code, body := get(t, c, "/"); code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, code, body)
		}
	}
	b.Signal(syscall.SIGKILL)
	b.WaitExit(10 * time.Second)
	for i := range 20 {
		if code, body := get(t, c, "/"); code != http.StatusOK {
			t.Fatalf("request %d after the kill: %d %s", i, code, body)
		}
	}
	resp, err := c.Client.Get("http://" + c.Admin + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s struct {
		Requests  int    `json:"requests"`
		Failures  int    `json:"failures"`
		Ejections int    `json:"ejections"`
		Source    string `json:"source"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	if s.Requests != 30 || s.Failures != 0 || s.Ejections != 1 || s.Source != "static" {
		t.Errorf("status = %+v, want 30 requests, 0 failures, 1 ejection, static source", s)
	}
	c.Signal(syscall.SIGTERM)
	if code := c.WaitExit(10 * time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
}

func TestBadFlagsExit2(t *testing.T) {
	for _, args := range [][]string{{"--targets", "nohost"}, {}, {"--timeout", "0s", "--targets", "127.0.0.1:1"}} {
		c := childtest.StartNoWait(t, consumerBin, nil, args...)
		if code := c.WaitExit(10 * time.Second); code != 2 || !strings.Contains(c.Logs(), "--") {
			t.Errorf("%v: exit %d, logs %q; want 2 and a message naming the flag", args, code, c.Logs())
		}
	}
}
