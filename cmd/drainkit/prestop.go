package main

import (
	"fmt"
	"io"
	"os"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/internal/prestop"
	"github.com/spf13/cobra"
)

func newPrestopCmd(stdout, stderr io.Writer) *cobra.Command {
	o := prestop.Options{}
	cmd := &cobra.Command{
		Use:   "prestop",
		Short: "Kubernetes preStop hook: start the drain and return when the propagation window has ended",
		Long: `prestop calls POST http://ADMIN/drain?wait=propagation on the service's admin listener
and returns when the propagation window has ended, so that Kubernetes sends SIGTERM only
after consumers have stopped routing to the pod. Use it as the preStop exec command in
images without a shell:

  lifecycle:
    preStop:
      exec:
        command: ["/drainkit", "prestop"]

A service built on drainkit.Main answers the same hook itself ("/myservice prestop",
the same code), so an image needs only the service binary.

The admin address comes from --admin-addr, else from DRAINKIT_ADMIN_ADDR (the variable
the service itself reads; a hook's exec runs with the container's environment), else
127.0.0.1:8081; an empty or wildcard host (":8081", "0.0.0.0:8081", "[::]:8081") means
127.0.0.1, so that the call comes from a loopback peer. It exits non-zero with a message
naming the address when the admin listener cannot be reached within --connect-timeout,
or when the service refuses the request. The token (if the admin listener requires one)
comes from --token or DRAINKIT_ADMIN_TOKEN.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Token == "" {
				o.Token = os.Getenv("DRAINKIT_ADMIN_TOKEN")
			}
			if o.AdminAddr == "" {
				o.AdminAddr = os.Getenv(envAdminAddr)
			}
			if o.AdminAddr == "" {
				o.AdminAddr = prestop.DefaultAddr
			}
			o.AddrSource = "--admin-addr or " + envAdminAddr
			addr, took, err := prestop.Call(cmd.Context(), o)
			if err != nil {
				return &exitError{code: 1, msg: "prestop: " + err.Error()}
			}
			fmt.Fprint(stdout, prestop.Done("drainkit", addr, took))
			return nil
		},
	}
	prestop.BindFlags(cmd.Flags(), &o, "default $"+envAdminAddr+", else "+prestop.DefaultAddr)
	return cmd
}

// envAdminAddr is the service's admin.addr variable, which prestop reads too.
var envAdminAddr = config.EnvVar("admin.addr")
