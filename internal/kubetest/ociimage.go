package kubetest

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// WriteImage writes to w an OCI image layout as a tar archive (what
// `ctr images import` reads) of one image named ref (e.g.
// "drainkit.invalid/hello:test"): a single layer holding the static binary
// at bin as /<base name of bin>, which is the image's entrypoint. The image
// is for linux on the architecture of this process. The layer is an
// uncompressed tar with fixed times, so the same binary gives the same
// image digest.
//
// ref must have a tag; the name goes in the index's
// io.containerd.image.name annotation (the name ctr gives the image) and
// the tag in org.opencontainers.image.ref.name.
func WriteImage(w io.Writer, ref, bin string) error {
	return WriteImageConfig(w, ref, bin, ImageConfig{})
}

// WriteImageConfig is WriteImage with the image configuration cfg: where
// the binary goes and how the image runs it (see ImageConfig).
func WriteImageConfig(w io.Writer, ref, bin string, cfg ImageConfig) error {
	colon := strings.LastIndex(ref, ":")
	if colon < 0 || strings.Contains(ref[colon:], "/") {
		return fmt.Errorf("kubetest: image reference %q has no tag", ref)
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("kubetest: image %s: %w", ref, err)
	}
	cfg, err = cfg.withDefaults(bin)
	if err != nil {
		return fmt.Errorf("kubetest: image %s: %w", ref, err)
	}
	var layer bytes.Buffer
	lt := tar.NewWriter(&layer)
	if err := cfg.writeLayer(lt, exe); err != nil {
		return err
	}
	if err := lt.Close(); err != nil {
		return err
	}
	layerDesc := descriptor("application/vnd.oci.image.layer.v1.tar", layer.Bytes())
	platform := map[string]string{"architecture": runtime.GOARCH, "os": "linux"}
	config, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"config":       cfg.runConfig(),
		// An uncompressed layer's diff ID is its digest.
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{layerDesc.Digest}},
	})
	if err != nil {
		return err
	}
	configDesc := descriptor("application/vnd.oci.image.config.v1+json", config)
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        configDesc,
		"layers":        []ociDescriptor{layerDesc},
	})
	if err != nil {
		return err
	}
	manifestDesc := descriptor("application/vnd.oci.image.manifest.v1+json", manifest)
	manifestDesc.Platform = platform
	manifestDesc.Annotations = map[string]string{
		"io.containerd.image.name":          ref,
		"org.opencontainers.image.ref.name": ref[colon+1:],
	}
	index, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.index.v1+json",
		"manifests":     []ociDescriptor{manifestDesc},
	})
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	files := []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", index},
		{blobPath(layerDesc), layer.Bytes()},
		{blobPath(configDesc), config},
		{blobPath(manifestDesc), manifest},
	}
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Name: dir, Mode: 0o755, ModTime: time.Unix(0, 0), Typeflag: tar.TypeDir}); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// ociDescriptor is an OCI content descriptor.
type ociDescriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int               `json:"size"`
	Platform    map[string]string `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

func descriptor(mediaType string, data []byte) ociDescriptor {
	sum := sha256.Sum256(data)
	return ociDescriptor{MediaType: mediaType, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: len(data)}
}

func blobPath(d ociDescriptor) string {
	return "blobs/sha256/" + strings.TrimPrefix(d.Digest, "sha256:")
}
