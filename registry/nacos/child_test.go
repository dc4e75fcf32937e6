package nacos_test

// Acceptance tests of issue 21 that run internal/nacosservice as a real
// child process registered in the real Nacos server, and send it real
// signals.

import (
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/childtest"
	"github.com/drainkit/drainkit/internal/nacostest"
	"github.com/drainkit/drainkit/registry"
)

// TestChildWarmup: with a 1s warm-up, whenever the server lists the
// instance /readyz already answers 200; it is listed once READY.
func TestChildWarmup(t *testing.T) {
	const svc = "warmup-svc"
	child.Path(t) // build first: the clock starts with the child
	start := time.Now()
	ch := startChild(t, "--warmup", "1s", "--service", svc)
	port := childPort(t, ch)
	saw503 := false
	var present time.Duration
	eventually(t, 15*time.Second, "instance listed after warm-up", func() (bool, string) {
		l, err := adminList(svc)
		if err != nil {
			return false, err.Error()
		}
		_, found := find(l, port)
		code := ch.Probe("/readyz") // after the read: if it was listed, READY came first
		saw503 = saw503 || code == http.StatusServiceUnavailable
		if found && code != http.StatusOK {
			t.Fatalf("listed %s after start while /readyz answers %d", time.Since(start), code)
		}
		present = time.Since(start)
		return found, fmt.Sprintf("found %v, readyz %d", found, code)
	})
	if !saw503 {
		t.Fatal("/readyz never answered 503: the warm-up was not observed")
	}
	t.Logf("listed %s after the child started (warm-up 1s)", present.Round(time.Millisecond))
	if present < time.Second {
		t.Fatalf("listed %s after start, before the 1s warm-up ended", present)
	}
	in, _ := find(mustList(t, adminList, svc), port)
	if _, ok := in.Metadata[registry.MetaReadyAt]; !ok {
		t.Fatalf("no %s metadata: %+v", registry.MetaReadyAt, in)
	}
	ch.Signal(syscall.SIGTERM)
	if code := ch.WaitExit(childtest.Budget + 5*time.Second); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

func mustList(t *testing.T, list func(string) ([]instance, error), svc string) []instance {
	t.Helper()
	l, err := list(svc)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestChildSIGTERM: on SIGTERM the server acknowledges the deregistration
// within 100ms and its consumers' list drops the instance within 100ms plus
// the server's own list delay, while the process keeps serving through its
// window; the timeline records deregistered and confirmed.
func TestChildSIGTERM(t *testing.T) {
	const svc = "sigterm-svc"
	ch := startChild(t, "--service", svc)
	port := childPort(t, ch)
	waitList(t, consumerList, svc, port, "listed", func(_ instance, ok bool) bool { return ok })
	sig := time.Now()
	ch.Signal(syscall.SIGTERM)
	var gone time.Duration
	for {
		l, err := consumerList(svc)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := find(l, port); !ok {
			gone = time.Since(sig)
			break
		}
		if time.Since(sig) > childtest.PropagationMax {
			t.Fatal("still listed at propagation.max")
		}
	}
	resp, err := ch.Client.Get("http://" + ch.HTTP + "/")
	if err != nil {
		t.Fatalf("not serving after deregistration: %v", err)
	}
	resp.Body.Close()
	serving := time.Since(sig)
	dereg, conf, win := ch.CleanDrain(childtest.Budget + 2*time.Second)
	t.Logf("after SIGTERM: gone from the consumers' list by %s (observed), still serving at %s; timeline: deregistered %s, confirmed %s, window ended %s",
		gone.Round(time.Millisecond), serving.Round(time.Millisecond), dereg.At.Round(time.Millisecond), conf.At.Round(time.Millisecond), win.At.Round(time.Millisecond))
	// drainkit's part: the server acknowledged the deregistration within
	// 100ms of the signal. The server's lists then follow within its
	// rebuild delay (nacostest.ListDelay), which no client can shorten.
	if dereg.At > 100*time.Millisecond {
		t.Fatalf("deregistered %s after SIGTERM, want within 100ms", dereg.At)
	}
	if gone > 100*time.Millisecond+nacostest.ListDelay {
		t.Fatalf("gone from the list %s after SIGTERM, want within 100ms + the server's list delay %s", gone, nacostest.ListDelay)
	}
	if serving >= win.At {
		t.Fatalf("the service answered at %s, not before the window ended at %s", serving, win.At)
	}
}

// TestChildKill9: a READY instance killed with SIGKILL leaves the server's
// lists when the server notices its connection gone; the time is printed.
func TestChildKill9(t *testing.T) {
	const svc = "kill9-svc"
	ch := startChild(t, "--service", svc)
	port := childPort(t, ch)
	waitList(t, adminList, svc, port, "listed", func(_ instance, ok bool) bool { return ok })
	kill := time.Now()
	ch.Signal(syscall.SIGKILL)
	var consumerGone time.Duration
	took := eventually(t, 60*time.Second, "gone from the admin list after kill -9", func() (bool, string) {
		if consumerGone == 0 {
			if l, err := consumerList(svc); err == nil {
				if _, ok := find(l, port); !ok {
					consumerGone = time.Since(kill)
				}
			}
		}
		l, err := adminList(svc)
		if err != nil {
			return false, err.Error()
		}
		_, ok := find(l, port)
		return !ok, fmt.Sprint("found ", ok)
	})
	t.Logf("kill -9: the server's detection: gone from consumers' list after %s, from the admin list after %s",
		consumerGone.Round(time.Millisecond), took.Round(time.Millisecond))
}

// TestChildBadSettings: a bad namespace, group, server port, cluster or
// weight exits 2 before any listener opens, naming the variable.
func TestChildBadSettings(t *testing.T) {
	for _, tc := range []struct{ env, key string }{
		{"NACOS_NAMESPACE=bad namespace!", "NACOS_NAMESPACE"},
		{"NACOS_GROUP=a@@b", "NACOS_GROUP"},
		{"NACOS_SERVER_ADDR=127.0.0.1:99999", "NACOS_SERVER_ADDR"},
		{"NACOS_SERVER_ADDR=127.0.0.1", "NACOS_SERVER_ADDR"},
		{"NACOS_CLUSTER=a_b", "NACOS_CLUSTER"},
		{"NACOS_WEIGHT=0", "NACOS_WEIGHT"},
		{"NACOS_USERNAME=nacos", "NACOS_USERNAME"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			ch := childtest.StartNoWait(t, child.Path(t), childEnv(tc.env))
			if code := ch.WaitExit(15 * time.Second); code != 2 {
				t.Fatalf("exit code %d, want 2", code)
			}
			logs := ch.Logs()
			if !strings.Contains(logs, tc.key) {
				t.Fatalf("the error does not name %s:\n%s", tc.key, logs)
			}
			if len(ch.LogLines("started")) != 0 {
				t.Fatalf("listeners opened:\n%s", logs)
			}
		})
	}
}
