//go:build !unix

package nacos

import (
	"os"
	"path/filepath"
)

// claimDir writes dir's owner file. Where flock is not available nothing
// tells a live owner from a dead one: directories of killed processes are
// left for the user to remove.
func claimDir(dir, line string) error {
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(line), 0o600)
}

// ownerGone never reports a process gone where flock is not available.
func ownerGone(string) bool { return false }
