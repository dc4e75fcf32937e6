package budget

import "fmt"

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
