package drill

import (
	"context"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"
)

// listenerFlag matches a listener's line in a drainkit program's --help:
// "--<name>-addr string   listener <name>, host:port ..." (drainkit's
// flags.go), and not the settings whose flag also ends in -addr (such as
// --registry-nacos-server-addr).
var listenerFlag = regexp.MustCompile(`(?m)^\s*--([A-Za-z0-9_-]+)-addr string\s+listener `)

// helpTimeout bounds the --help run of listenerFlags: a program that does not
// know --help may start serving instead of exiting.
const helpTimeout = 10 * time.Second

// listenerFlags returns the names of the listeners (the <name> of
// --<name>-addr) that the program command, run with args and --help in env,
// lists, but for http and admin (every replica gets those) and those args
// already sets. It returns nil when the program does not answer --help in
// helpTimeout or lists no listener: then it is not a drainkit program, or
// one with only the listeners the drill sets anyway.
func listenerFlags(command string, args, env []string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), helpTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, command, append(slices.Clip(args), "--help")...)
	cmd.Env = env
	out, _ := cmd.CombinedOutput() // a drainkit program exits 0; others may not
	var names []string
	for _, m := range listenerFlag.FindAllStringSubmatch(string(out), -1) {
		if name := m[1]; name != "http" && name != "admin" && !setsFlag(args, name+"-addr") && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// setsFlag reports whether args set --flag (as "--flag v" or "--flag=v").
func setsFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == "--"+flag || strings.HasPrefix(a, "--"+flag+"=") {
			return true
		}
	}
	return false
}

// bindHint is what WaitReady adds when a replica's stderr says an address
// was in use: which flags the drill sets and how to set another one.
func bindHint(tail []string) string {
	for _, l := range tail {
		if strings.Contains(l, "address already in use") {
			return "\n  the drill gives --http-addr, --admin-addr and each --<name>-addr the program's --help lists a free loopback port;" +
				" give any other listener one with --exec-arg=--<name>-addr=127.0.0.1:0 (the flag the error above names)"
		}
	}
	return ""
}
