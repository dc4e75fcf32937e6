package consultest_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeGo stands in for `go build -o <out> ...`: it records the call, then
// writes a small executable to <out> in two parts with a pause between, as a
// slow linker would, so that concurrent builds into one file would clobber
// each other.
const fakeGo = `#!/bin/sh
set -e
out=
while [ $# -gt 0 ]; do
  if [ "$1" = "-o" ]; then out="$2"; shift; fi
  shift
done
echo build >> "$FAKE_GO_LOG"
printf '#!/bin/sh\n' > "$out"
sleep 0.5
printf 'echo consul-fake\n' >> "$out"
`

// TestConsulScriptConcurrentCallers runs two scripts/consul.sh at once
// against an empty cache (DRAINKIT_CACHE) with a fake go (DRAINKIT_GO): both
// succeed and print the same path, the binary is whole, and it was built
// once (the second caller waited for the first).
func TestConsulScriptConcurrentCallers(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "..", "..", "scripts", "consul.sh"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gobin := filepath.Join(dir, "fakego")
	if err := os.WriteFile(gobin, []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	cache, log := filepath.Join(dir, "cache"), filepath.Join(dir, "builds.log")
	const callers = 2
	var wg sync.WaitGroup
	outs, errs := make([]string, callers), make([]error, callers)
	start := make(chan struct{})
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(script)
			cmd.Env = append(os.Environ(), "DRAINKIT_CACHE="+cache, "DRAINKIT_GO="+gobin, "FAKE_GO_LOG="+log)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			<-start
			out, err := cmd.Output()
			outs[i] = strings.TrimSpace(string(out))
			if err != nil {
				errs[i] = err
				t.Logf("caller %d stderr:\n%s", i, stderr.String())
			}
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("caller %d failed: %v", i, err)
		}
	}
	want := filepath.Join(cache, "consul-1.14.0")
	for i, out := range outs {
		if out != want {
			t.Fatalf("caller %d printed %q, want %q", i, out, want)
		}
	}
	got, err := exec.Command(want).Output()
	if err != nil || strings.TrimSpace(string(got)) != "consul-fake" {
		t.Fatalf("built binary ran with %q, %v: not whole", got, err)
	}
	builds, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(builds), "build"); n != 1 {
		t.Fatalf("built %d times by %d concurrent callers; want once", n, callers)
	}
	leftovers, _ := filepath.Glob(filepath.Join(cache, "consul-1.14.0.tmp*"))
	if len(leftovers) != 0 {
		t.Fatalf("temporary files left behind: %v", leftovers)
	}
}
