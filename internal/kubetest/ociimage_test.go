package kubetest_test

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drainkit/drainkit/internal/kubetest"
)

// WriteImage's archive is an OCI layout whose blobs match their digests,
// whose index names the image for ctr, and whose one layer holds the binary
// as the entrypoint; the same binary gives the same bytes.
func TestWriteImage(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "app")
	if err := os.WriteFile(bin, []byte("#!binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := kubetest.WriteImage(&a, "drainkit.invalid/app:v1", bin); err != nil {
		t.Fatal(err)
	}
	if err := kubetest.WriteImage(&b, "drainkit.invalid/app:v1", bin); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two archives of the same binary differ")
	}
	files := map[string][]byte{}
	tr := tar.NewReader(&a)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		files[h.Name] = data
	}
	for name, data := range files {
		if digest, ok := strings.CutPrefix(name, "blobs/sha256/"); ok && digest != "" {
			if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != digest {
				t.Errorf("blob %s has digest %x", name, sum)
			}
		}
	}
	type desc struct {
		Digest      string
		Platform    map[string]string
		Annotations map[string]string
	}
	var index struct{ Manifests []desc }
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json %s: %v", files["index.json"], err)
	}
	m := index.Manifests[0]
	if m.Annotations["io.containerd.image.name"] != "drainkit.invalid/app:v1" || m.Annotations["org.opencontainers.image.ref.name"] != "v1" || m.Platform["os"] != "linux" {
		t.Errorf("index manifest = %+v", m)
	}
	var manifest struct {
		Config desc
		Layers []desc
	}
	if err := json.Unmarshal(files["blobs/sha256/"+strings.TrimPrefix(m.Digest, "sha256:")], &manifest); err != nil || len(manifest.Layers) != 1 {
		t.Fatalf("manifest: %v, %+v", err, manifest)
	}
	var config struct {
		Config struct{ Entrypoint []string }
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		}
	}
	if err := json.Unmarshal(files["blobs/sha256/"+strings.TrimPrefix(manifest.Config.Digest, "sha256:")], &config); err != nil {
		t.Fatal(err)
	}
	if len(config.Config.Entrypoint) != 1 || config.Config.Entrypoint[0] != "/app" || len(config.RootFS.DiffIDs) != 1 || config.RootFS.DiffIDs[0] != manifest.Layers[0].Digest {
		t.Errorf("config = %+v", config)
	}
	layer := tar.NewReader(bytes.NewReader(files["blobs/sha256/"+strings.TrimPrefix(manifest.Layers[0].Digest, "sha256:")]))
	h, err := layer.Next()
	if err != nil || h.Name != "app" || h.Mode != 0o755 {
		t.Fatalf("layer's first entry = %+v, %v", h, err)
	}
	if data, _ := io.ReadAll(layer); string(data) != "#!binary" {
		t.Errorf("layer's app = %q", data)
	}
	if err := kubetest.WriteImage(io.Discard, "drainkit.invalid/app", bin); err == nil {
		t.Error("WriteImage accepted a reference without a tag")
	}
}
