//go:build tools

// Package tools pins the Consul agent that drainkit's registry tests run
// against (a dev agent on loopback). It is built by scripts/consul.sh.
package tools

import _ "github.com/hashicorp/consul"
