package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/drainkit/drainkit/registry/nacos"
)

// TestKubernetesManifestNacosSDKDir: a program wiring registry/nacos on the
// shipped manifest, whose root file system is read-only, finds a writable
// directory for nacos-sdk-go's log and cache (registry.nacos.sdk_dir's
// default, under the user's cache directory): the manifest points
// XDG_CACHE_HOME at an emptyDir volume mounted in the container. Without it
// the default lands on the read-only image (distroless's $HOME/.cache) and
// the program exits 2 naming registry.nacos.sdk_dir; the check that causes
// that exit, nacos.CheckSDKDir, runs here against both.
func TestKubernetesManifestNacosSDKDir(t *testing.T) {
	deploy, _, _ := readManifest(t)
	c := deploy.Spec.Template.Spec.Containers[0]
	if !c.SecurityContext.ReadOnlyRootFilesystem {
		t.Fatal("the manifest's root file system is writable: this test is about a read-only one")
	}
	cacheHome := ""
	for _, e := range c.Env {
		if e.Name == "XDG_CACHE_HOME" {
			cacheHome = e.Value
		}
	}
	if cacheHome == "" {
		t.Fatal("no XDG_CACHE_HOME: registry.nacos.sdk_dir's default is on the read-only root file system")
	}
	volume := ""
	for _, m := range c.VolumeMounts {
		if filepath.Clean(m.MountPath) == filepath.Clean(cacheHome) {
			volume = m.Name
		}
	}
	if volume == "" {
		t.Fatalf("XDG_CACHE_HOME %s is no volume mount of the container", cacheHome)
	}
	emptyDir := false
	for _, v := range deploy.Spec.Template.Spec.Volumes {
		emptyDir = emptyDir || (v.Name == volume && v.EmptyDir != nil)
	}
	if !emptyDir {
		t.Fatalf("volume %s (mounted at %s) is no emptyDir", volume, cacheHome)
	}

	// The manifest's environment puts the SDK's default directory on the
	// volume; the volume (a writable directory here) passes the start's
	// check.
	t.Setenv("XDG_CACHE_HOME", cacheHome)
	if d := nacos.DefaultSDKDir(); !strings.HasPrefix(d, filepath.Clean(cacheHome)+string(filepath.Separator)) {
		t.Fatalf("with XDG_CACHE_HOME=%s the SDK's directory is %s, not on the volume", cacheHome, d)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	if err := nacos.CheckSDKDir(""); err != nil {
		t.Fatalf("a writable XDG_CACHE_HOME: %v", err)
	}
	// Without it: a HOME where nothing can be created (a file stands in
	// for the read-only root file system, since root may write anywhere).
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/dev/null")
	if err := nacos.CheckSDKDir(""); err == nil || !strings.Contains(err.Error(), "registry.nacos.sdk_dir") {
		t.Fatalf("an unwritable default: err %v, want one naming registry.nacos.sdk_dir", err)
	}
}
