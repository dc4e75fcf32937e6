// Package config loads drainkit's settings (the timings of DESIGN.md section
// 3, readiness-check options, the admin listener and the registry) from a
// YAML, TOML or JSON file, DRAINKIT_* environment variables and command-line
// flags, and validates all of them before anything starts.
//
// Precedence, highest first: flags (only those set on the command line), then
// environment variables, then the file, then the defaults
// (budget.DefaultTimings, budget.DefaultCheckOptions and the defaults
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
// Every source is read through github.com/spf13/viper: the file with
// viper's codecs (go.yaml.in/yaml/v3, pelletier/go-toml/v2, encoding/json),
// the process environment with viper's env binding (prefix DRAINKIT, key
// replacer '.' -> '_'; a Sources.Env list, which viper cannot read, is looked
// up under the same names), the flags with viper's pflag binding. drainkit's
// strictness stays on top, because viper on its own is lenient: it merges
// "propagation: {min: 5s}" and "propagation.min: 6s" (or keys differing
// only in case) into one value silently, where Load reports the key set
// twice, naming both spellings (it checks the document as decoded, before
// viper merges it), and viper's getters turn "banana" into 0, where Load
// asks viper only for the raw value and converts and range-checks it here.
// String values (admin.addr, admin.token, registry.service, ...) are checked
// from every source, even one a higher source overrides. config is the only
// package of drainkit that imports viper, and imports none of its remote
// providers. config imports no registry client: RegistryConfig holds plain
// values that registry/consul.OptionsFrom, registry/etcd.OptionsFrom and
// registry/nacos.OptionsFrom convert.
//
// # An application's own viper configuration
//
// A program that keeps its configuration in viper (one file, its env
// prefix, flags bound with BindPFlags) puts drainkit's keys under a sub-tree
// of it, drainkit: by default, and passes its *viper.Viper as
// Sources.Viper:
//
//	# greeter.yaml
//	greeting: hello
//	drainkit:
//	  propagation:
//	    min: 5s
//	  grace_period: 25s
//
//	v := viper.New()
//	v.SetEnvPrefix("GREETER")
//	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_", "-", "_"))
//	v.AutomaticEnv()
//	config.BindFlags(cmd.Flags())           // --propagation-min, ...
//	v.BindPFlags(cmd.Flags())               // the application's own flags
//	config.BindViper(v, cmd.Flags(), "")    // drainkit's flags and GREETER_DRAINKIT_* under drainkit.
//	v.SetConfigFile("greeter.yaml")
//	err := v.ReadInConfig()
//	...
//	cfg, err := config.Load(config.Sources{Viper: v, Flags: cmd.Flags()})
//
// Each key then takes the application's precedence (v.Set, a flag set on
// the command line, GREETER_DRAINKIT_PROPAGATION_MIN, the file's
// drainkit.propagation.min, a remote provider, v.SetDefault), then
// drainkit's default; DRAINKIT_* variables and --config are not read (a
// key's own DRAINKIT_* variable set in the environment becomes a Warning
// naming the variable the application reads). The checks are the same: the
// sub-tree of the file (v.ConfigFileUsed) is decoded again to find a key set
// twice or an unknown key, every value Load can see (the file's, the
// variable's, the flag's) is converted and checked even when overridden,
// and errors name the layer, e.g.
//
//	propagation.min: "banana" from env GREETER_DRAINKIT_PROPAGATION_MIN is not a duration (want e.g. 5s; range >= 0s, <= propagation.max)
//	admin.addr: "nope" from file greeter.yaml at drainkit.admin.addr is not valid (must be host:port ...)
//
// A value set with v.Set, v.SetDefault or a remote provider is named
// "viper key drainkit.<key>": viper does not say which layer answered, so
// Load names the highest layer it reads itself that holds exactly the value
// viper returned. examples/greeter is a complete cobra + viper program.
//
// A nested sub-tree (Sources.ViperKey and BindViper's sub "infra.drainkit")
// gets the same checks and names: the file may spell its path as nested
// tables (infra: {drainkit: {...}}), as one dotted key (infra.drainkit:
// {...}) or mixed, its values are named "file greeter.yaml at
// infra.drainkit.<key>", and the application's own keys beside it (under
// infra:) are not checked.
//
// Out of scope: watching the file for changes (settings are read once, at
// start; an application's WatchConfig does not reload them), remote
// configuration stores of drainkit's own (an application's viper may use
// one; Load reads what it returns), and the Consul agent's address and ACL
// token, which consul/api reads from CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN and
// friends.
package config
