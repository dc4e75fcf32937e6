package budget

import (
	"fmt"
	"strconv"
	"time"
)

// CheckOptions set how readiness checks run and when they move the instance
// between READY and EJECTED (hysteresis: SuccessThreshold > FailureThreshold).
type CheckOptions struct {
	// Interval between check rounds (key checks.interval, default 5s, > 0).
	Interval time.Duration
	// Timeout per check; a check still running then fails (key
	// checks.timeout, default 1s, > 0 and <= Interval).
	Timeout time.Duration
	// FailureThreshold consecutive failed rounds move READY -> EJECTED (key
	// checks.failure_threshold, default 3, >= 1).
	FailureThreshold int
	// SuccessThreshold consecutive passed rounds move a check-ejected
	// instance back to READY (key checks.success_threshold, default 5,
	// > FailureThreshold).
	SuccessThreshold int
}

// DefaultCheckOptions returns interval 5s, timeout 1s, failure threshold 3
// and success threshold 5.
func DefaultCheckOptions() CheckOptions {
	return CheckOptions{Interval: 5 * time.Second, Timeout: time.Second, FailureThreshold: 3, SuccessThreshold: 5}
}

// Validate returns a *RangeError naming the key out of range, RangeErrors
// when several are, or nil. checks.timeout is judged against
// checks.interval and checks.success_threshold against
// checks.failure_threshold only when those are in range themselves.
func (c CheckOptions) Validate() error {
	var errs []*RangeError
	intervalOK := c.Interval > 0 && c.Interval <= MaxDuration
	if !intervalOK {
		errs = append(errs, &RangeError{"checks.interval", c.Interval.String(), "must be > 0 and <= " + MaxDuration.String()})
	}
	if c.Timeout <= 0 || intervalOK && c.Timeout > c.Interval {
		errs = append(errs, &RangeError{"checks.timeout", c.Timeout.String(), "must be > 0 and <= checks.interval (" + c.Interval.String() + ")"})
	}
	failureOK := c.FailureThreshold >= 1 && c.FailureThreshold <= 1000
	if !failureOK {
		errs = append(errs, &RangeError{"checks.failure_threshold", strconv.Itoa(c.FailureThreshold), "must be between 1 and 1000"})
	}
	if c.SuccessThreshold > 1000 || failureOK && c.SuccessThreshold <= c.FailureThreshold || c.SuccessThreshold < 1 {
		errs = append(errs, &RangeError{"checks.success_threshold", strconv.Itoa(c.SuccessThreshold),
			fmt.Sprintf("must be > checks.failure_threshold (%d) and <= 1000", c.FailureThreshold)})
	}
	return joinRange(errs)
}
