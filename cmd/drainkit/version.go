package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"

	dk "github.com/drainkit/drainkit"
)

// versionLine is what `drainkit version` and `drainkit --version` print:
// the module version and VCS revision from the build information, and the
// Go version and platform.
func versionLine() string {
	return fmt.Sprintf("drainkit %s %s %s/%s", dk.Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func newVersionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print the version (from the build information)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(stdout, versionLine())
			return err
		},
	}
}
