//go:build linux

package kubetest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// ImportImageConfig is ImportImage with the image configuration cfg (see
// WriteImageConfig): for an image that follows a Dockerfile, with its
// USER, ENV and ENTRYPOINT. A ref without a registry host, such as
// "drainkit-example:latest", is imported under the name the kubelet looks
// for, "docker.io/library/drainkit-example:latest", so that a manifest
// naming it runs unchanged.
func (c *Cluster) ImportImageConfig(ref, bin string, cfg ImageConfig) error {
	ref = normalizeRef(ref)
	f, err := os.CreateTemp(c.dir, "image-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := WriteImageConfig(f, ref, bin, cfg); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if out, err := c.Ctr(context.Background(), "images", "import", f.Name()); err != nil {
		return fmt.Errorf("ctr images import %s: %w: %s", ref, err, out)
	}
	return nil
}

// normalizeRef is the docker reference's familiar-name rule, which the
// kubelet applies to a pod's image: a first component without a "." or
// ":" (and not "localhost") is no registry host, so the name is on
// docker.io, and a one-component name is under library/.
func normalizeRef(ref string) string {
	first, _, ok := strings.Cut(ref, "/")
	if ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return ref
	}
	if !ok {
		return "docker.io/library/" + ref
	}
	return "docker.io/" + ref
}

// Ctr runs containerd's ctr against the cluster's containerd, in the
// namespace of the kubelet's containers (k8s.io), and returns its combined
// output: for instance `Ctr(ctx, "tasks", "kill", "--signal", "SIGTERM",
// id)` signals a container's first process the way the kubelet does, with
// id from a pod's status.containerStatuses[].containerID (without its
// "containerd://").
func (c *Cluster) Ctr(ctx context.Context, args ...string) ([]byte, error) {
	return exec.CommandContext(ctx, "ctr", append([]string{"--address", c.containerdSock, "-n", "k8s.io"}, args...)...).CombinedOutput()
}

// GetJSON GETs path (such as "/api/v1/namespaces/default/pods") from the
// apiserver as cluster-admin and decodes its JSON into v: a read without
// a kubectl process, for a test that polls.
func (c *Cluster) GetJSON(ctx context.Context, path string, v any) error {
	return c.get(ctx, fmt.Sprintf("https://%s:%d%s", NodeIP, apiPort, path), v)
}
