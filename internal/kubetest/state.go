//go:build linux

package kubetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"testing"
)

// stateFile is what a cluster's teardown needs to undo it, written before
// Start changes the host and removed when teardown leaves nothing behind.
// If the test process is killed (a timeout, a kill -9) its components die
// with it (Pdeathsig), but the kubelet's sysctls, the namespace, mounts and
// cgroups remain: the next Start finds the file and finishes that teardown
// first, putting back the settings saved before the killed run.
type stateFile struct {
	Dir   string     // the cluster's directory
	Netns string     // the namespace's name
	Veth  string     // the host end of the veth pair
	Host  *hostState // the host before the cluster
}

// saveState writes c's state file at path.
func (c *Cluster) saveState() error {
	b, err := json.Marshal(stateFile{Dir: c.dir, Netns: c.ns.name, Veth: c.ns.host, Host: c.host})
	if err != nil {
		return err
	}
	return os.WriteFile(c.statePath, b, 0o600)
}

// recoverStale finishes the teardown of a cluster whose process died, if
// the state file at path says there is one. The caller holds the machine's
// lock, so no live cluster owns the file.
func recoverStale(t testing.TB, path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var s stateFile
	if err := json.Unmarshal(b, &s); err != nil || s.Host == nil || s.Dir == "" || s.Netns == "" {
		return fmt.Errorf("kubetest: state file %s of a killed run is unreadable (%v): tear that cluster down by hand, then remove the file", path, err)
	}
	t.Logf("kubetest: a run that was killed left a cluster in %s: tearing it down first", s.Dir)
	c := &Cluster{dir: s.Dir, statePath: path, host: s.Host, ns: &netns{name: s.Netns, path: "/run/netns/" + s.Netns, host: s.Veth}}
	if err := c.teardown(t); err != nil {
		return fmt.Errorf("kubetest: tearing down the cluster of a killed run: %w", err)
	}
	return nil
}
