package budget

import (
	"fmt"
	"strings"
)

// RangeError reports a timing (or other setting) outside its allowed range.
// Key is the configuration key (e.g. "propagation.min"), Value the value given
// and Allowed the range in words.
type RangeError struct {
	Key     string
	Value   string
	Allowed string
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("%s: %s is out of range: %s", e.Key, e.Value, e.Allowed)
}

// RangeErrors is several settings out of range, reported together so that
// one edit fixes them all rather than one per run. It renders on one line,
// "; " between them; errors.As finds the first *RangeError and
// EachRangeError visits every one.
type RangeErrors []*RangeError

func (e RangeErrors) Error() string {
	msgs := make([]string, len(e))
	for i, re := range e {
		msgs[i] = re.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap returns each *RangeError, for errors.As and errors.Is.
func (e RangeErrors) Unwrap() []error {
	errs := make([]error, len(e))
	for i, re := range e {
		errs[i] = re
	}
	return errs
}

// joinRange returns nil for no error, the *RangeError itself for one, and
// RangeErrors for more.
func joinRange(errs []*RangeError) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return RangeErrors(errs)
}

// EachRangeError calls f with err itself if it is a *RangeError, or with
// each *RangeError of RangeErrors; anything else (nil too) calls f never.
func EachRangeError(err error, f func(*RangeError)) {
	switch e := err.(type) {
	case *RangeError:
		f(e)
	case RangeErrors:
		for _, re := range e {
			f(re)
		}
	}
}
