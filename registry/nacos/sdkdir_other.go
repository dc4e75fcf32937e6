//go:build !unix

package nacos

// lockDir does nothing where flock is not available: directories of
// killed processes are then left for the user to remove.
func lockDir(string) error { return nil }

// ownerGone never reports a process gone where flock is not available.
func ownerGone(string) (bool, error) { return false, nil }
