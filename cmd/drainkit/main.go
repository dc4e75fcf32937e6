// Command drainkit is drainkit's command-line tool:
//
//	drainkit drill     rolling-restart drill comparing drain strategies under load
//	drainkit prestop   Kubernetes preStop hook: POST /drain?wait=propagation
//	drainkit check     print the drain budget of a configuration and judge it
//	drainkit version   print the version (also --version)
//
// `drainkit serve` (hidden) is the service mode the drill re-executes itself
// in; it is not meant to be run by hand.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// exitError carries a command's exit code. Msg, if not empty, is printed to
// stderr as "drainkit: Msg".
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// run executes the command line args and returns the exit code: 0 success,
// 1 a failed drill, prestop or check verdict, 2 bad usage or configuration,
// 3 a check WARN verdict (see newCheckCmd).
func run(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "drainkit:", ee.msg)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "drainkit:", err)
	return 2
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "drainkit",
		Short: "drainkit: graceful shutdown and drain for Go services",
		Long: `drainkit makes a rolling restart lose no request. This tool drills a drain setting
under load (drill), runs the Kubernetes preStop hook (prestop) and checks a
configuration's drain budget against the pod's grace period (check).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.Version = versionLine()
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(newDrillCmd(stdout, stderr), newPrestopCmd(stdout, stderr), newCheckCmd(stdout), newVersionCmd(stdout), newServeCmd(), newKubeLoadCmd())
	return root
}
