//go:build linux

package kubetest_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/kubetest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// helloImage is the image of testdata/hello.
const helloImage = "drainkit.invalid/hello:test"

// The cluster comes up with a Ready node, runs a pod of an image built from
// a static binary, and a second pod reaches it through its Service's
// ClusterIP (kube-proxy's rules); teardown leaves nothing behind (Start's
// cleanup fails the test otherwise).
func TestCluster(t *testing.T) {
	c := kubetest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := c.NodeReady(ctx); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "hello")
	build := exec.Command("go", "build", "-o", bin, "./testdata/hello")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./testdata/hello: %v\n%s", err, out)
	}
	if err := c.ImportImage(helloImage, bin); err != nil {
		t.Fatal(err)
	}
	kubectl := func(stdin string, args ...string) string { return c.MustKubectl(t, ctx, stdin, args...) }
	kubectl(serverManifest, "apply", "-f", "-")
	kubectl("", "wait", "--for=condition=Ready", "pod/hello", "--timeout=180s")
	podIP := kubectl("", "get", "pod/hello", "-o", "jsonpath={.status.podIP}")
	kubectl(clientManifest, "apply", "-f", "-")
	kubectl("", "wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/client", "--timeout=180s")
	logs := kubectl("", "logs", "pod/client")
	if want := "hello from " + podIP; !strings.Contains(logs, want) {
		t.Fatalf("client's log = %q, want %q", logs, want)
	}
	t.Logf("client through Service %s: %s", serviceIP, strings.TrimSpace(logs))

	// From the node: the pod directly, and the Service (kube-proxy's
	// rules for locally sent packets, the ClusterIP range's route).
	tr := &http.Transport{DialContext: c.DialContext}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for _, url := range []string{"http://" + podIP + ":8080/", "http://" + serviceIP + "/"} {
		resp, err := client.Get(url)
		if err != nil {
			t.Fatalf("from the node: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := "hello from " + podIP; !strings.Contains(string(body), want) {
			t.Fatalf("from the node, GET %s = %s %q, want %q", url, resp.Status, body, want)
		}
	}
}

// serviceIP is the hello Service's fixed ClusterIP (no cluster DNS).
const serviceIP = "10.200.2.10"

const serverManifest = `apiVersion: v1
kind: Pod
metadata: {name: hello, labels: {app: hello}}
spec:
  terminationGracePeriodSeconds: 5
  containers:
  - name: hello
    image: ` + helloImage + `
    imagePullPolicy: Never
    args: [serve, ":8080"]
    ports: [{containerPort: 8080}]
    readinessProbe:
      httpGet: {path: /, port: 8080}
      periodSeconds: 1
---
apiVersion: v1
kind: Service
metadata: {name: hello}
spec:
  clusterIP: ` + serviceIP + `
  selector: {app: hello}
  ports: [{port: 80, targetPort: 8080}]
`

const clientManifest = `apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  restartPolicy: Never
  containers:
  - name: client
    image: ` + helloImage + `
    imagePullPolicy: Never
    args: [get, "http://` + serviceIP + `/"]
`
