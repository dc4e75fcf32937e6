package config

import (
	"strconv"
	"strings"
)

// KeyConfig is the pseudo-key that Errors about the configuration file itself
// carry (missing, unreadable, empty, not parseable, unsupported extension).
const KeyConfig = "config"

// Error is the error Load and Validate return. It renders in one line as
//
//	<key>: <value> from <source> <problem> (<allowed>)
//
// e.g. `propagation.min: "banana" from env DRAINKIT_PROPAGATION_MIN is not a
// duration (want e.g. 5s; range >= 0s, <= propagation.max)`. The admin
// token's value is never included.
type Error struct {
	// Key is the configuration key (e.g. "propagation.min"), KeyConfig for
	// the file itself, or the unknown key found in the file.
	Key string
	// Value is the value as given, already quoted or redacted for display;
	// empty when there is none (an unknown key).
	Value string
	// Source is where Value came from.
	Source Source
	// Problem says what is wrong, e.g. "is not a duration".
	Problem string
	// Allowed is the allowed range or the expected form, in words.
	Allowed string
	// Err is the underlying error, if any: a *budget.RangeError from
	// lifecycle's validation, or a file-system or parse error.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(displayKey(e.Key))
	b.WriteString(":")
	if e.Value != "" {
		b.WriteString(" ")
		b.WriteString(e.Value)
	}
	if e.Source.Kind == FromDefault {
		b.WriteString(" (default)")
	} else {
		b.WriteString(" from ")
		b.WriteString(oneLine(e.Source.String()))
	}
	b.WriteString(" ")
	b.WriteString(oneLine(e.Problem))
	if e.Allowed != "" {
		b.WriteString(" (")
		b.WriteString(oneLine(e.Allowed))
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// displayKey quotes a key that is not made of [a-z0-9._-], so an odd key from
// a file cannot break the one-line format.
func displayKey(k string) string {
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return strconv.Quote(k)
		}
	}
	if k == "" {
		return `""`
	}
	return k
}

// oneLine replaces line breaks and control characters so that every Error
// is a single line.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return ' '
		}
		return r
	}, s)
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029 || r == 0x85 }

// quoteValue renders a value as given for an Error: strings quoted, other
// values in Go syntax, and long values cut to 64 bytes.
func quoteValue(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return strconv.Quote(s)
}
