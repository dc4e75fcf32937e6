package drainkit

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/internal/prestop"
)

// PrestopCommand is the first argument that turns a binary built on Main
// into its own Kubernetes preStop hook: `myservice prestop` does what
// `drainkit prestop` does (the same code): POST /drain?wait=propagation
// to the service's admin listener over loopback, returning when the
// propagation window has ended. So a distroless image needs one binary:
//
//	lifecycle:
//	  preStop:
//	    exec:
//	      command: ["/myservice", "prestop"]
//
// The admin address is --admin-addr, else the program's own admin.addr
// setting as the service reads it (DRAINKIT_ADMIN_ADDR, --config or
// DRAINKIT_CONFIG, WithDefaultAdminAddr, else :8081), dialled on 127.0.0.1
// when its host is empty or a wildcard; the token is --token, else
// admin.token. Exit status 0 when the window ended, 1 when the call failed
// (the message names the address), 2 for a bad flag or setting.
const PrestopCommand = "prestop"

// runPrestop is `<program> prestop [flags]`.
func (s *service) runPrestop(ctx context.Context, args []string) int {
	o := prestop.Options{}
	fs := pflag.NewFlagSet(s.name+" "+PrestopCommand, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	prestop.BindFlags(fs, &o, "default: this program's admin.addr setting, "+config.EnvVar("admin.addr")+" or --config")
	fs.String(config.KeyConfig, "", "configuration file the service reads, for admin.addr and admin.token (env "+config.EnvConfig+")")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(s.stdout, "Usage: %s %s [flags]\n\nStarts the drain and returns when the propagation window has ended: the Kubernetes preStop hook.\n\n", s.name, PrestopCommand)
			fs.SetOutput(s.stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(s.out, "%s %s: %v (see --help)\n", s.name, PrestopCommand, err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(s.out, "%s %s: unexpected argument %q (see --help)\n", s.name, PrestopCommand, fs.Arg(0))
		return 2
	}
	// The settings as the service loads them: --admin-addr is admin.addr's
	// own flag name, so Load checks it like the service's.
	cfg, err := config.Load(config.Sources{Flags: fs, Env: s.env})
	if err != nil {
		fmt.Fprintf(s.out, "%s %s: %v\n", s.name, PrestopCommand, err)
		return 2
	}
	o.AdminAddr, o.AddrSource = cfg.Admin.Addr, cfg.Source("admin.addr").String()
	if s.defaultAdmin != "" && cfg.Source("admin.addr").Kind == config.FromDefault {
		o.AdminAddr, o.AddrSource = s.defaultAdmin, "the program's default admin address"
	}
	if o.Token == "" {
		o.Token = string(cfg.Admin.Token)
	}
	addr, took, err := prestop.Call(ctx, o)
	if err != nil {
		fmt.Fprintf(s.out, "%s %s: %v\n", s.name, PrestopCommand, err)
		return 1
	}
	fmt.Fprint(s.out, prestop.Done(s.name, addr, took))
	return 0
}
