package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// rawValue is one value for one key from one source, before conversion.
type rawValue struct {
	v   any // string from env and flags; string, int, float64, bool, ... from a file
	src Source
}

// display renders v for an Error: quoted if a string, redacted for the token.
func (r rawValue) display(k keyDef) string {
	if k.kind == kindSecret {
		return "[redacted]"
	}
	if s, ok := r.v.(string); ok {
		return quoteValue(s)
	}
	if t, ok := table(r.v); ok && k.kind == kindMeta { // a file's table, as its pairs
		pairs := make(map[string]string, len(t))
		for key, v := range t {
			pairs[key] = fmt.Sprint(v)
		}
		return quoteValue(formatMeta(pairs))
	}
	s := fmt.Sprint(r.v)
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return oneLine(s)
}

// apply converts r and stores it in k's field of c.
func (k keyDef) apply(c *Config, r rawValue) *Error {
	fail := func(problem, allowed string, err error) *Error {
		return &Error{Key: k.name, Value: r.display(k), Source: r.src, Problem: problem, Allowed: allowed, Err: err}
	}
	switch p := k.field(c).(type) {
	case *time.Duration:
		d, problem, hint := toDuration(r.v)
		if problem != "" {
			return fail(problem, hint+"; range "+k.allowed, nil)
		}
		*p = d
	case *int:
		n, problem := toInt(r.v)
		if problem != "" {
			return fail(problem, "range "+k.allowed, nil)
		}
		*p = n
	case *float64:
		f, problem := toFloat(r.v)
		if problem != "" {
			return fail(problem, "range "+k.allowed, nil)
		}
		*p = f
	case *string:
		s, ok := r.v.(string)
		if !ok {
			return fail("is "+typeName(r.v)+", not a string", k.allowed, nil)
		}
		*p = strings.TrimSpace(s)
	case *Secret:
		s, ok := r.v.(string)
		if !ok {
			return fail("is "+typeName(r.v)+", not a string", k.allowed, nil)
		}
		*p = Secret(strings.TrimSpace(s))
	case *bool:
		b, problem := toBool(r.v)
		if problem != "" {
			return fail(problem, k.allowed, nil)
		}
		*p = b
	case *map[string]string:
		m, problem := toMeta(r.v)
		if problem != "" {
			return fail(problem, k.allowed, nil)
		}
		*p = m
	}
	return nil
}

// typeName names a decoded file value's type for an error message.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a table"
	case time.Time:
		return "a date"
	}
	return fmt.Sprintf("a %T", v)
}

// toDuration converts a file, env or flag value to a duration. It returns a
// problem ("is not a duration", "has no unit", ...) and a hint for the error.
func toDuration(v any) (d time.Duration, problem, hint string) {
	const want = "want e.g. 5s"
	switch x := v.(type) {
	case string:
		return parseDuration(x)
	case time.Duration: // an application's viper.Set or SetDefault
		return x, "", ""
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		if f, _ := strconv.ParseFloat(fmt.Sprint(x), 64); f == 0 {
			return 0, "", ""
		}
		return 0, "has no unit", "a duration needs a unit, e.g. 5s"
	}
	return 0, "is " + typeName(v) + ", not a duration", want
}

// parseDuration parses s with time.ParseDuration and explains failures
// precisely: no unit, unknown unit, too large, or not a duration at all.
func parseDuration(s string) (time.Duration, string, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, "is empty", "want a duration, e.g. 5s"
	}
	if d, err := time.ParseDuration(s); err == nil {
		return d, "", ""
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "xXpPeEiInN_") {
		if f == 0 {
			return 0, "", ""
		}
		return 0, "has no unit", "a duration needs a unit, e.g. 5s"
	}
	// Lex [-+]?(number unit)+ to tell an unknown unit and an overflow apart.
	rest := strings.TrimLeft(s, "+-")
	if len(s)-len(rest) > 1 || rest == "" {
		return 0, "is not a duration", "want e.g. 5s"
	}
	for rest != "" {
		i := 0
		digits := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			if rest[i] != '.' {
				digits++
			}
			i++
		}
		if digits == 0 || strings.Count(rest[:i], ".") > 1 {
			return 0, "is not a duration", "want e.g. 5s"
		}
		rest = rest[i:]
		j := 0
		for j < len(rest) && !(rest[j] >= '0' && rest[j] <= '9' || rest[j] == '.') {
			j++
		}
		unit := rest[:j]
		rest = rest[j:]
		switch unit {
		case "":
			return 0, "has no unit", "a duration needs a unit after every number, e.g. 1m30s"
		case "ns", "us", "µs", "μs", "ms", "s", "m", "h":
		default:
			return 0, "has unknown unit " + quoteValue(strings.TrimSpace(unit)), "units are ns, us, ms, s, m and h, e.g. 5s"
		}
	}
	return 0, "is too large", "at most 24h"
}

// toInt converts a file, env or flag value to an int.
func toInt(v any) (int, string) {
	switch x := v.(type) {
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if errors.Is(err, strconv.ErrRange) {
			return 0, "is too large"
		}
		if err != nil {
			return 0, "is not an integer"
		}
		return clampInt(n)
	case int:
		return clampInt(int64(x))
	case int64:
		return clampInt(x)
	case uint64:
		if x > math.MaxInt32 {
			return 0, "is too large"
		}
		return int(x), ""
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) || math.IsNaN(x) {
			return 0, "is not an integer"
		}
		if math.Abs(x) > math.MaxInt32 {
			return 0, "is too large"
		}
		return int(x), ""
	}
	if typeName(v) == "a number" {
		return toInt(fmt.Sprint(v))
	}
	return 0, "is " + typeName(v) + ", not an integer"
}

// toFloat converts a file, env or flag value to a finite float64.
func toFloat(v any) (float64, string) {
	var f float64
	switch x := v.(type) {
	case string:
		n, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, "is not a number"
		}
		f = n
	case float64:
		f = x
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case uint64:
		f = float64(x)
	default:
		if typeName(v) == "a number" {
			return toFloat(fmt.Sprint(v))
		}
		return 0, "is " + typeName(v) + ", not a number"
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, "is not a finite number"
	}
	return f, ""
}

// clampInt keeps values within int32 so that range checks never see a
// wrapped-around number.
func clampInt(n int64) (int, string) {
	if n > math.MaxInt32 || n < math.MinInt32 {
		return 0, "is too large"
	}
	return int(n), ""
}

// toBool converts a file, env or flag value to a bool.
func toBool(v any) (bool, string) {
	switch x := v.(type) {
	case bool:
		return x, ""
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(x))
		if err != nil {
			return false, "is not a boolean"
		}
		return b, ""
	}
	return false, "is " + typeName(v) + ", not a boolean"
}
