package lifecycle

import (
	"errors"
	"fmt"
)

// exitError is Run's error when the process should exit non-zero
// (DESIGN.md section 5): code 1 when warm-up failed, something was
// force-closed, a server failed or the grace period ran out. ExitCode reads
// it.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return fmt.Sprintf("exit %d: %v", e.code, e.err) }

func (e *exitError) Unwrap() error { return e.err }

// ExitCode maps Run's result to a process exit code: 0 for nil, else the
// code Run chose (1 today: warm-up failed, something was force-closed, a
// server failed or the grace period ran out), and 1 for any other error.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}
