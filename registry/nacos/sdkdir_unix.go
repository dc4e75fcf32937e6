//go:build unix

package nacos

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// held keeps the owner files open: closing one would release its lock.
var held struct {
	sync.Mutex
	files []*os.File
}

// claimDir creates dir's owner file, takes an exclusive flock on it, held
// until the process ends (the kernel releases it then, kill -9 included),
// and only then writes line into it: a sweeper that reads the line while
// the lock is free knows the owner has ended, never that it is starting.
func claimDir(dir, line string) error {
	f, err := os.OpenFile(filepath.Join(dir, ownerFile), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return err
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	held.Lock()
	held.files = append(held.files, f)
	held.Unlock()
	return nil
}

// ownerGone reports whether the process that claimed dir has ended: its
// owner file's lock is free. Any error (the file gone, a lock that cannot
// be taken) says no.
func ownerGone(dir string) bool {
	f, err := os.Open(filepath.Join(dir, ownerFile))
	if err != nil {
		return false
	}
	defer f.Close() // releases the lock again
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
