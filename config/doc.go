// Package config loads drainkit's settings (the timings of DESIGN.md section
// 3, readiness-check options, the admin listener and the registry) from a
// YAML, TOML or JSON file, DRAINKIT_* environment variables and command-line
// flags, and validates all of them before anything starts.
//
// Precedence, highest first: flags (only those set on the command line), then
// environment variables, then the file, then the defaults
// (lifecycle.DefaultTimings, lifecycle.DefaultCheckOptions and the defaults
// documented on each key). Every key has one spelling per source:
//
//	file:  propagation.min: 5s         (nested or dotted, once; keys are case-insensitive)
//	env:   DRAINKIT_PROPAGATION_MIN=5s (key upper-cased, '.' -> '_')
//	flag:  --propagation-min=5s        (key with '.' and '_' -> '-')
//
// Load fails on the first bad value with an *Error that names the key, the
// value given, where it came from and the allowed range, in one line:
//
//	propagation.min: "banana" from env DRAINKIT_PROPAGATION_MIN is not a duration (want e.g. 5s; range >= 0s, <= propagation.max)
//
// A DRAINKIT_* variable that is neither a key's variable nor one drainkit
// knows for another purpose (DRAINKIT_CONFIG, the tests' and scripts'
// DRAINKIT_CONSUL_BIN, DRAINKIT_ETCD_BIN, DRAINKIT_CACHE, ...) is ignored
// with a Warning, not an error, naming the closest variable when it looks
// like a typo:
//
//	env DRAINKIT_PROPAGATION_MNI is not a drainkit setting and is ignored; did you mean DRAINKIT_PROPAGATION_MIN?
//
// Load records the warnings (Config.Warnings) and drainkit.Main logs them
// before any listener opens. They are not errors because the prefix is not
// reserved: people set DRAINKIT_* variables of their own, and a service must
// not refuse to start over one (see CheckEnv).
//
// Durations use Go's syntax (time.ParseDuration: "300ms", "1m30s"); a bare
// number other than 0 has no unit and is rejected, and no duration may exceed
// 24h. The admin token never appears in an error, in String or in logs.
//
// The file is decoded with the format's own decoder (go.yaml.in/yaml/v3,
// pelletier/go-toml/v2, encoding/json), not through viper: viper merges
// "propagation: {min: 5s}" and "propagation.min: 6s" (or keys differing only
// in case) into one value silently, where Load reports a key set twice, and
// viper's lenient getters turn "banana" into 0. Values are converted and
// range-checked here. String values (admin.addr, admin.token,
// registry.service) are checked from every source, even one a higher source
// overrides. config imports no registry client: RegistryConfig holds plain
// values that registry/consul.FromConfig converts.
//
// Out of scope: watching the file for changes (settings are read once, at
// start), remote configuration stores, and the Consul agent's address and ACL
// token, which consul/api reads from CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN and
// friends.
package config
