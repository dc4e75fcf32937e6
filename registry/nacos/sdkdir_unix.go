//go:build unix

package nacos

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// lockName is the file in a process's SDK directory that it keeps locked.
const lockName = "lock"

// held keeps the lock files open: closing one would release its lock.
var held struct {
	sync.Mutex
	files []*os.File
}

// lockDir creates dir's lock file and holds an exclusive flock on it until
// the process ends (the kernel releases it then, kill -9 included).
func lockDir(dir string) error {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return err
	}
	held.Lock()
	held.files = append(held.files, f)
	held.Unlock()
	return nil
}

// ownerGone reports whether the process that made dir has ended: its lock
// file's lock is free. The error wraps os.ErrNotExist when dir has no lock
// file.
func ownerGone(dir string) (bool, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil // closing f releases the lock again
}
