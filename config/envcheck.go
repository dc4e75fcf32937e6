package config

import (
	"os"
	"sort"
	"strings"
)

// otherEnv lists the DRAINKIT_* variables that are not configuration keys,
// each with who reads it. CheckEnv accepts them without a warning. This is
// the one list of them: a test of this package scans the repository and
// fails on a DRAINKIT_* name that is neither a key's variable nor listed
// here, and on an entry here that nothing mentions any more.
var otherEnv = map[string]string{
	EnvConfig:                  "config.Load: the configuration file's path",
	"DRAINKIT_CONSUL_BIN":      "registry/consul/consultest and bench/cmd/benchrun: the consul binary (the Makefile sets it from scripts/consul.sh)",
	"DRAINKIT_ETCD_BIN":        "registry/etcd/etcdtest and bench/cmd/benchrun: the etcd binary (the Makefile sets it from scripts/etcd.sh)",
	"DRAINKIT_NACOS_JAR":       "internal/nacostest: the Nacos server's jar (the Makefile sets it from scripts/nacos.sh)",
	"DRAINKIT_SPRING_JAR":      "cmd/drainkit's drill --consumer spring: the Spring Cloud consumer's jar (the Makefile sets it from scripts/spring.sh)",
	"DRAINKIT_CACHE":           "scripts/consul.sh, scripts/etcd.sh, scripts/nacos.sh, scripts/spring.sh and scripts/kube.sh: the directory the servers are built in",
	"DRAINKIT_KUBE_DIR":        "internal/kubetest: the directory of the Kubernetes commands (the Makefile sets it from scripts/kube.sh)",
	"DRAINKIT_GO":              "scripts/consul.sh: the go command that builds consul",
	"DRAINKIT_CHROMIUM":        "cmd/drainkit's tests: the headless Chromium that checks the drill report",
	"DRAINKIT_KEEP_SCREENSHOT": "cmd/drainkit's drill test: where to keep the report's screenshot",
	"DRAINKIT_TOOLBIN_TEST":    "internal/toolbin's test (set with t.Setenv)",
	"DRAINKIT_TOOLBIN_CHILD":   "internal/toolbin's test: marks the test binary it re-runs as a child",
	"DRAINKIT_NATS_MESSAGES":   "workdrain/natsdrain's rolling-restart test: how many messages it publishes (the Makefile's bench-worker sets 10000)",
}

// maxSuggestDistance is the largest edit distance (insertions, deletions,
// substitutions and swaps of adjacent letters, after upper-casing) at which
// CheckEnv suggests a variable.
const maxSuggestDistance = 2

// Warning is a problem in the settings that does not stop the program: a
// DRAINKIT_* environment variable that is neither a key's variable (EnvVar)
// nor another variable drainkit knows (DRAINKIT_CONFIG, the tests' and
// scripts' DRAINKIT_CONSUL_BIN, DRAINKIT_ETCD_BIN, DRAINKIT_CACHE, ...), so
// its value is ignored. Most often it is a typo that leaves a setting at its
// default. The variable's value is never included: it may be a secret.
type Warning struct {
	// Var is the variable as set, e.g. "DRAINKIT_PROPAGATION_MNI".
	Var string
	// Suggestion is the key variable (or DRAINKIT_CONFIG) closest to Var
	// when it is within edit distance 2 counting a swap of adjacent letters
	// as 1, case ignored (e.g. "DRAINKIT_PROPAGATION_MIN"); empty when none
	// is that close. With Sources.Viper, a key's own variable (which Load
	// does not read then) is a Warning too, suggesting the variable the
	// application's configuration reads (ViperEnvVar, e.g.
	// "GREETER_DRAINKIT_PROPAGATION_MIN").
	Suggestion string
}

// String renders w in one line, e.g. "env DRAINKIT_PROPAGATION_MNI is not a
// drainkit setting and is ignored; did you mean DRAINKIT_PROPAGATION_MIN?".
func (w Warning) String() string {
	s := "env " + w.Var + " is not a drainkit setting and is ignored"
	if w.Suggestion != "" {
		s += "; did you mean " + w.Suggestion + "?"
	}
	return s
}

// CheckEnv returns one Warning per variable of env ("KEY=value" strings; nil
// means os.Environ()) whose name starts with DRAINKIT_ (in any case) and is
// not a variable drainkit reads, sorted by name; nil when there is none.
// Variables with an empty value are skipped, as Load treats them as unset.
// Load records the same warnings in the Config (Config.Warnings).
//
// An unknown variable is a warning, not an error: the prefix is not reserved
// and people set DRAINKIT_* variables of their own (in CI, wrappers and
// scripts), so refusing to start over one would break working deployments.
// drainkit.Main logs each warning before any listener opens.
func CheckEnv(env []string) []Warning {
	if env == nil {
		env = os.Environ()
	}
	seen := map[string]bool{}
	var out []Warning
	for _, kv := range env {
		name, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" || seen[name] || !knownPrefix(name) || isKnownEnv(name) {
			continue
		}
		seen[name] = true
		out = append(out, Warning{Var: name, Suggestion: suggestEnv(name)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Var < out[j].Var })
	return out
}

// knownPrefix reports whether name starts with DRAINKIT_, case ignored.
func knownPrefix(name string) bool {
	return len(name) >= len(envPrefix) && strings.EqualFold(name[:len(envPrefix)], envPrefix)
}

// isKnownEnv reports whether name is, exactly, a key's variable or one of
// otherEnv.
func isKnownEnv(name string) bool {
	if _, ok := otherEnv[name]; ok {
		return true
	}
	for _, k := range keys {
		if EnvVar(k.name) == name {
			return true
		}
	}
	return false
}

// suggestEnv returns the key variable (or DRAINKIT_CONFIG) closest to name,
// upper-cased, if it is within maxSuggestDistance; the first in key order
// wins a tie.
func suggestEnv(name string) string {
	vars := make([]string, 0, len(keys)+1)
	for _, k := range keys {
		vars = append(vars, EnvVar(k.name))
	}
	return Closest(strings.ToUpper(name), append(vars, EnvConfig), maxSuggestDistance)
}

// Warnings returns the warnings Load found in the environment (see CheckEnv),
// in the order of the variables' names; nil for none and for a Config not
// produced by Load. The caller logs them: drainkit.Main does, at start.
func (c *Config) Warnings() []Warning {
	return append([]Warning(nil), c.warnings...)
}
