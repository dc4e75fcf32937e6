package kubetest

import (
	"archive/tar"
	"fmt"
	"path"
	"strings"
	"time"
)

// ImageConfig is how an image written by WriteImageConfig holds and runs
// its one binary: the parts of a Dockerfile's final stage that the kubelet
// and the container runtime read (COPY's destination, ENTRYPOINT, CMD, ENV,
// USER, EXPOSE, WORKDIR). The zero value is WriteImage's image: the binary
// at /<its base name>, which is the entrypoint, run as root with no
// environment.
type ImageConfig struct {
	// Path is where the binary goes, absolute (COPY's destination, such
	// as "/httpservice"); empty: "/" + the binary's base name. Parent
	// directories are created (mode 0755).
	Path string
	// Entrypoint and Cmd are the image's ENTRYPOINT and CMD, exec form;
	// both empty: Entrypoint is [Path].
	Entrypoint, Cmd []string
	// Env are "NAME=value" entries (ENV).
	Env []string
	// User is USER, e.g. "65532:65532"; empty: root. The kubelet refuses a
	// pod with runAsNonRoot whose image's user is not a non-zero number.
	User string
	// ExposedPorts are EXPOSE's ports, e.g. "8080/tcp".
	ExposedPorts []string
	// WorkingDir is WORKDIR; empty: "/".
	WorkingDir string
}

// withDefaults fills Path and Entrypoint from the binary at bin, and
// checks Path.
func (c ImageConfig) withDefaults(bin string) (ImageConfig, error) {
	if c.Path == "" {
		c.Path = "/" + path.Base(bin)
	}
	if !path.IsAbs(c.Path) || path.Clean(c.Path) != c.Path || c.Path == "/" {
		return c, fmt.Errorf("the binary's path %q is not a clean absolute file name", c.Path)
	}
	if len(c.Entrypoint) == 0 && len(c.Cmd) == 0 {
		c.Entrypoint = []string{c.Path}
	}
	return c, nil
}

// writeLayer writes the layer's entries: Path's parent directories, then
// the binary exe at Path, executable by every user (USER need not be
// root), with fixed times so that the same binary gives the same layer.
func (c ImageConfig) writeLayer(tw *tar.Writer, exe []byte) error {
	name := strings.TrimPrefix(c.Path, "/")
	var dirs []string
	for d := path.Dir(name); d != "."; d = path.Dir(d) {
		dirs = append([]string{d + "/"}, dirs...)
	}
	for _, d := range dirs {
		if err := tw.WriteHeader(&tar.Header{Name: d, Mode: 0o755, ModTime: time.Unix(0, 0), Typeflag: tar.TypeDir, Format: tar.FormatPAX}); err != nil {
			return err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(exe)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err := tw.Write(exe)
	return err
}

// runConfig is the "config" member of the OCI image configuration.
func (c ImageConfig) runConfig() map[string]any {
	rc := map[string]any{}
	set := func(key string, v []string) {
		if len(v) > 0 {
			rc[key] = v
		}
	}
	set("Entrypoint", c.Entrypoint)
	set("Cmd", c.Cmd)
	set("Env", c.Env)
	if c.User != "" {
		rc["User"] = c.User
	}
	if c.WorkingDir != "" {
		rc["WorkingDir"] = c.WorkingDir
	}
	if len(c.ExposedPorts) > 0 {
		ports := map[string]struct{}{}
		for _, p := range c.ExposedPorts {
			ports[p] = struct{}{}
		}
		rc["ExposedPorts"] = ports
	}
	return rc
}
