package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/childtest"
	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
)

// backdate moves the evidence time of the snapshot at path to age ago, as
// if the run that wrote it had ended then.
func backdate(t *testing.T, path string, age time.Duration) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["view"].(map[string]any)["received"] = time.Now().Add(-age).Format(time.RFC3339Nano)
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A consumer started while etcd is stopped serves the snapshot an earlier
// run wrote 10s before: its calls succeed and its status names the snapshot
// and its age. With the snapshot older than --max-staleness it refuses,
// saying why.
func TestSnapshotWhileEtcdStopped(t *testing.T) {
	srv := etcdtest.Start(t)
	svc := []string{"--service", "orders"}
	r1 := childtest.Start(t, serviceBin, srv.Env(), svc...)
	r2 := childtest.Start(t, serviceBin, srv.Env(), svc...)
	path := filepath.Join(t.TempDir(), "orders.json")
	snap := append(svc, "--etcd", srv.Endpoint, "--snapshot", path)
	c1 := childtest.Start(t, consumerBin, nil, snap...)
	waitFor(t, 20*time.Second, "the first run lists r1 and r2", func() bool {
		s := readStatus(t, c1)
		return s.lists(r1.HTTP) && s.lists(r2.HTTP)
	})
	waitFor(t, 10*time.Second, "the snapshot of r1 and r2", func() bool {
		b, _ := os.ReadFile(path)
		var doc struct {
			View struct {
				Instances []json.RawMessage `json:"instances"`
			} `json:"view"`
		}
		return json.Unmarshal(b, &doc) == nil && len(doc.View.Instances) == 2
	})
	c1.Signal(syscall.SIGTERM)
	if code := c1.WaitExit(10 * time.Second); code != 0 {
		t.Fatalf("first run exit code %d", code)
	}
	srv.Stop()
	backdate(t, path, 10*time.Second)

	c2 := childtest.Start(t, consumerBin, nil, append(snap, "--timeout", "15s")...)
	for i := range 10 {
		if code, body := get(t, c2, "/"); code != http.StatusOK {
			t.Fatalf("request %d with etcd stopped: %d %s", i, code, body)
		}
	}
	s := readStatus(t, c2)
	if age := time.Duration(s.Age); s.Snapshot != path || age < 10*time.Second || age > time.Minute || s.Source != "etcd" || s.Failures != 0 {
		t.Errorf("status %+v (age %v): want the snapshot %s from etcd, about 10s old (and older while etcd is down), 0 failures", s, age, path)
	}
	c2.Signal(syscall.SIGTERM)
	if code := c2.WaitExit(10 * time.Second); code != 0 {
		t.Errorf("second run exit code %d", code)
	}

	backdate(t, path, 2*time.Minute)
	c3 := childtest.Start(t, consumerBin, nil, append(snap, "--timeout", "15s", "--max-staleness", "1m")...)
	code, body := get(t, c3, "/")
	if code != http.StatusBadGateway || !strings.Contains(body, "snapshot") || !strings.Contains(body, "older than MaxStaleness 1m0s") {
		t.Errorf("GET with a snapshot older than --max-staleness: %d %q, want 502 naming the snapshot and the maximum staleness", code, body)
	}
	c3.Signal(syscall.SIGTERM)
	if code := c3.WaitExit(10 * time.Second); code != 0 {
		t.Errorf("third run exit code %d", code)
	}
	for _, r := range []*childtest.Child{r1, r2} {
		r.Signal(syscall.SIGKILL)
		r.WaitExit(10 * time.Second)
	}
}
