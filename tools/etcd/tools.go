//go:build tools

// Package tools pins the etcd server that drainkit's etcd registry tests run
// against (a single member on loopback with a temporary data directory). It is
// built by scripts/etcd.sh.
package tools

import _ "go.etcd.io/etcd/server/v3"
