// Package toolbin finds the external server binaries that drainkit's tests
// run against (the Consul agent, the etcd server): from an environment
// variable when it is set, else by running the module's scripts/<name>.sh,
// which builds the binary once into a cache and prints its path. It never
// reports "not found" as a reason to skip: callers fail the test.
package toolbin

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Path returns $envVar if it is set (and names an existing file), else the
// path printed by <module root>/scripts/<script>, which may build the binary
// first, taking minutes. The module root is the first directory above the
// working directory whose go.mod declares github.com/drainkit/drainkit.
// Its errors start with "<harness>: ", the name of the calling harness
// package (such as "consultest").
func Path(harness, envVar, script string) (string, error) {
	p, err := path(envVar, script)
	if err != nil {
		return "", fmt.Errorf("%s: %w", harness, err)
	}
	return p, nil
}

func path(envVar, script string) (string, error) {
	if p := os.Getenv(envVar); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", envVar, p, err)
		}
		return p, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", fmt.Errorf("%w; set %s", err, envVar)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(root, "scripts", script))
	cmd.Dir = root
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("scripts/%s: %w: %s", script, err, stderr.String())
	}
	p := strings.TrimSpace(string(out))
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("scripts/%s printed %q: %w", script, p, err)
	}
	return p, nil
}

// moduleRoot finds the drainkit module's root above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module github.com/drainkit/drainkit\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("module root of github.com/drainkit/drainkit not found above the working directory")
		}
		dir = parent
	}
}
