package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/drainkit/drainkit/config"
)

// An application that keeps its configuration in viper puts drainkit's keys
// under drainkit: in its own file, binds drainkit's flags and variables with
// BindViper, and loads them with Sources.Viper: viper's precedence decides,
// drainkit's rules check (examples/greeter is the whole program).
func ExampleLoad_viper() {
	dir, err := os.MkdirTemp("", "greeter")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "greeter.yaml")
	yaml := "greeting: hello\ndrainkit:\n  propagation:\n    min: 2s\n  drain.timeout: 4s\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		fmt.Println(err)
		return
	}

	fs := pflag.NewFlagSet("greeter", pflag.ContinueOnError)
	fs.String("greeting", "hi", "the application's own flag")
	config.BindFlags(fs) // --propagation-min, --drain-timeout, ...
	v := viper.New()
	v.SetEnvPrefix("GREETER") // GREETER_DRAINKIT_PROPAGATION_MIN
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_", "-", "_"))
	v.AutomaticEnv()
	if err := v.BindPFlags(fs); err != nil { // the application's own flags
		fmt.Println(err)
		return
	}
	config.BindViper(v, fs, config.DefaultViperKey)
	if err := fs.Parse([]string{"--propagation-min=3s"}); err != nil {
		fmt.Println(err)
		return
	}
	v.SetConfigFile(file)
	if err := v.ReadInConfig(); err != nil {
		fmt.Println(err)
		return
	}

	cfg, err := config.Load(config.Sources{Viper: v, Flags: fs})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, key := range []string{"propagation.min", "drain.timeout", "grace_period"} {
		src := cfg.Source(key)
		where := src.String()
		if src.Kind == config.FromFile {
			where = "file " + filepath.Base(src.Name) + " at " + src.Key
		}
		fmt.Printf("%s from %s\n", key, where)
	}
	fmt.Println(v.GetString("greeting"), cfg.Timings.PropagationMin, cfg.Timings.DrainTimeout)

	v.Set("drainkit.checks.failure_threshold", "many")
	_, err = config.Load(config.Sources{Viper: v, Flags: fs})
	fmt.Println(err)
	// Output:
	// propagation.min from flag --propagation-min
	// drain.timeout from file greeter.yaml at drainkit.drain.timeout
	// grace_period from default
	// hello 3s 4s
	// checks.failure_threshold: "many" from viper key drainkit.checks.failure_threshold is not an integer (range 1..1000)
}
