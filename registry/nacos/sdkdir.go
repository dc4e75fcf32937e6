package nacos

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nacos-group/nacos-sdk-go/v2/common/constant"
)

// DefaultSDKDir returns the directory under which nacos-sdk-go's files go
// when Options.SDKDir and WatchOptions.SDKDir are empty: "drainkit/nacos"
// in the user's cache directory (os.UserCacheDir, e.g. ~/.cache), else in
// os.TempDir() when there is none.
func DefaultSDKDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "drainkit", "nacos")
	}
	return filepath.Join(os.TempDir(), "drainkit", "nacos")
}

// CheckSDKDir creates dir (DefaultSDKDir when empty) if needed and reports
// an error naming registry.nacos.sdk_dir when it cannot be created or
// written: a program checks it before any listener opens, since the SDK
// would otherwise fail later, in the background.
func CheckSDKDir(dir string) error {
	if dir == "" {
		dir = DefaultSDKDir()
	}
	err := os.MkdirAll(dir, 0o700)
	if err == nil {
		var f *os.File
		if f, err = os.CreateTemp(dir, ".probe-"); err == nil {
			f.Close()
			err = os.Remove(f.Name())
		}
	}
	if err != nil {
		return re("registry.nacos.sdk_dir", strconv.Quote(dir), "must be a directory this process can create and write ("+err.Error()+")")
	}
	return nil
}

// The SDK's files, bounded: nacos-sdk-go keeps one logger per process (the
// first client's log directory wins), rotated at sdkLogMaxMB with
// sdkLogBackups old files; each client has a cache directory of its own
// (a JSON file per service it reads, never loaded: NotLoadCacheAtStart),
// removed when it closes.
const (
	sdkLogMaxMB   = 10
	sdkLogBackups = 2
)

// processDir is this process's directory under a parent: <parent>/<pid>-<n>,
// holding its owner file (see ownerFile), "log" and one "cache-<n>" per
// client. A process keeps its owner file locked while it runs; the first use
// of a parent removes the directories of drainkit processes gone without
// cleaning up (kill -9), and nothing else: sdk_dir may point at a directory
// holding other programs' files.
type processDir struct {
	mu      sync.Mutex
	byRoot  map[string]string // parent -> this process's directory there
	clients atomic.Int64      // numbers the clients' cache directories
}

var sdkDirs = processDir{byRoot: map[string]string{}}

// clientDirs returns the log directory of this process and a new cache
// directory for one client under parent (DefaultSDKDir when empty), and a
// function removing the cache directory.
func (p *processDir) clientDirs(parent string) (logDir, cacheDir string, remove func(), err error) {
	if parent == "" {
		parent = DefaultSDKDir()
	}
	p.mu.Lock()
	dir, ok := p.byRoot[parent]
	if !ok {
		dir, err = newProcessDir(parent)
		if err != nil {
			p.mu.Unlock()
			return "", "", nil, err
		}
		p.byRoot[parent] = dir
	}
	p.mu.Unlock()
	cacheDir = filepath.Join(dir, "cache-"+strconv.FormatInt(p.clients.Add(1), 10))
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return "", "", nil, fmt.Errorf("nacos: SDK cache directory: %w", err)
	}
	return filepath.Join(dir, "log"), cacheDir, func() { _ = os.RemoveAll(cacheDir) }, nil
}

// ownerFile is the file that marks a directory under sdk_dir as made by
// drainkit, and by which process: it holds ownerLine of that process's pid,
// written only once the process holds the file's lock (see claimDir), so
// that a reader who finds the line while the lock is free knows the owner
// has ended. A directory without it, or with anything else in it, is never
// removed.
const ownerFile = "drainkit-owner"

// ownerLine is the owner file's content for pid.
func ownerLine(pid int) string {
	return "drainkit registry/nacos SDK directory of pid " + strconv.Itoa(pid) + "\n"
}

// newProcessDir sweeps parent of dead drainkit processes' directories, then
// makes and claims this process's.
func newProcessDir(parent string) (string, error) {
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", fmt.Errorf("nacos: SDK directory: %w", err)
	}
	sweep(parent)
	pid := os.Getpid()
	dir, err := os.MkdirTemp(parent, strconv.Itoa(pid)+"-")
	if err != nil {
		return "", fmt.Errorf("nacos: SDK directory: %w", err)
	}
	if err := claimDir(dir, ownerLine(pid)); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("nacos: SDK directory: %w", err)
	}
	return dir, nil
}

// sweep removes the directories under parent that a drainkit process made
// and that it no longer holds: named <pid>-..., with an owner file naming
// that pid, whose lock is free. A process killed between making its
// directory and writing its owner file leaves an empty directory behind:
// it is not provably drainkit's, so it stays.
func sweep(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() { // a symbolic link is not a directory here
			continue
		}
		dir := filepath.Join(parent, e.Name())
		if ownedByDrainkit(dir, e.Name()) && ownerGone(dir) {
			_ = os.RemoveAll(dir)
		}
	}
}

// ownedByDrainkit reports whether dir (named name) holds an owner file,
// a regular file, naming the pid its name starts with.
func ownedByDrainkit(dir, name string) bool {
	pid, _, ok := strings.Cut(name, "-")
	n, err := strconv.Atoi(pid)
	if !ok || err != nil || n <= 0 {
		return false
	}
	path := filepath.Join(dir, ownerFile)
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 256 {
		return false
	}
	b, err := os.ReadFile(path)
	return err == nil && string(b) == ownerLine(n)
}

// sdkFiles sets cc's log and cache directories and bounds its log.
func sdkFiles(cc *constant.ClientConfig, logDir, cacheDir string) {
	cc.LogDir, cc.CacheDir = logDir, cacheDir
	cc.LogRollingConfig = &constant.ClientLogRollingConfig{MaxSize: sdkLogMaxMB, MaxBackups: sdkLogBackups}
}
