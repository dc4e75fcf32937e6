package kubetest_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drainkit/drainkit/internal/kubetest"
)

// WriteImageConfig's image holds the binary where ImageConfig.Path says,
// under its parent directories, and its configuration carries the
// Dockerfile's ENTRYPOINT, ENV, USER and EXPOSE; a path that is not clean
// and absolute is refused.
func TestWriteImageConfig(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "app")
	if err := os.WriteFile(bin, []byte("#!binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := kubetest.ImageConfig{Path: "/usr/bin/svc", Entrypoint: []string{"/usr/bin/svc", "--http-addr", ":8080"},
		Env: []string{"DRAINKIT_ADMIN_ADDR=:8081"}, User: "65532:65532", ExposedPorts: []string{"8080/tcp"}}
	var buf bytes.Buffer
	if err := kubetest.WriteImageConfig(&buf, "drainkit-example:latest", bin, cfg); err != nil {
		t.Fatal(err)
	}
	blobs := map[string][]byte{}
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		blobs[h.Name] = data
	}
	// The configuration is the blob with a rootfs, the layer the one
	// holding the binary.
	var config struct {
		RootFS *json.RawMessage
		Config struct {
			Entrypoint, Env []string
			User            string
			ExposedPorts    map[string]struct{}
		}
	}
	var layer []byte
	for name, data := range blobs {
		if !strings.HasPrefix(name, "blobs/sha256/") {
			continue
		}
		var probe struct{ RootFS *json.RawMessage }
		if json.Unmarshal(data, &probe) == nil && probe.RootFS != nil {
			if err := json.Unmarshal(data, &config); err != nil {
				t.Fatal(err)
			}
		} else if bytes.Contains(data, []byte("#!binary")) {
			layer = data
		}
	}
	c := config.Config
	if !slices.Equal(c.Entrypoint, cfg.Entrypoint) || !slices.Equal(c.Env, cfg.Env) || c.User != cfg.User || len(c.ExposedPorts) != 1 {
		t.Errorf("image config = %+v, want %+v", c, cfg)
	}
	var names []string
	lr := tar.NewReader(bytes.NewReader(layer))
	for {
		h, err := lr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	if strings.Join(names, " ") != "usr/ usr/bin/ usr/bin/svc" {
		t.Errorf("layer entries %q, want usr/ usr/bin/ usr/bin/svc", names)
	}
	for _, bad := range []string{"svc", "/usr/../svc", "/"} {
		if err := kubetest.WriteImageConfig(io.Discard, "drainkit-example:latest", bin, kubetest.ImageConfig{Path: bad}); err == nil {
			t.Errorf("path %q accepted", bad)
		}
	}
}
