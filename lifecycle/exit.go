package lifecycle

import (
	"errors"
	"fmt"
)

// ExitError is returned by Run when the process should exit non-zero
// (DESIGN.md section 5): Code 1 when warm-up failed, something was
// force-closed, a server failed or the grace period ran out.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return fmt.Sprintf("exit %d: %v", e.Code, e.Err) }

func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode maps Run's result to a process exit code: 0 for nil, the Code of
// an *ExitError, 1 for any other error.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 1
}
