package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/drainkit/drainkit/registry"
)

// Limits of registry.meta: Consul's, the strictest of the three registries
// (etcd stores kratos's JSON and Nacos a string map, neither with a rule of
// its own that Consul's does not cover).
const (
	// maxMetaPairs is Consul's 64 pairs per instance less room for the
	// keys drainkit writes itself.
	maxMetaPairs = 60
	// maxMetaKey and maxMetaValue are Consul's key and value lengths, in
	// bytes.
	maxMetaKey   = 128
	maxMetaValue = 512
)

// metaAllowed is registry.meta's rule, in words.
const metaAllowed = "key=value pairs separated by commas (in the file also a table of strings; a repeated flag adds its pairs), at most 60; " +
	"keys 1 to 128 lower-case letters, digits, '_' and '-', none starting with drainkit_ or consul- nor kind or nacos_weight; " +
	"values up to 512 bytes of UTF-8 without ',' or control characters"

// reservedMeta explains why key is reserved, or returns "" when it is not:
// the keys the registrars and Sources write themselves, which a setting
// would collide with, and Consul's own prefix.
func reservedMeta(key string) string {
	switch {
	case strings.HasPrefix(key, "drainkit_"):
		return "drainkit writes its own drainkit_* keys (" + registry.MetaReadyAt + ", drainkit_managed, drainkit_endpoints)"
	case key == "kind":
		return "the Nacos registrar writes the primary endpoint's scheme there, as kratos does"
	case key == "nacos_weight":
		return "the Nacos Source sets it from the instance's weight (set registry.nacos.weight)"
	case strings.HasPrefix(key, "consul-"):
		return "Consul reserves the prefix consul- for its own use"
	}
	return ""
}

// toMeta converts a file, env or flag value of registry.meta: a string of
// key=value pairs separated by commas (empty items dropped, ASCII white
// space trimmed around each key and value), or a table of strings. It returns a problem for the
// Error, or "".
func toMeta(v any) (map[string]string, string) {
	if t, ok := table(v); ok {
		m := make(map[string]string, len(t))
		for _, k := range slices.Sorted(maps.Keys(t)) {
			s, ok := t[k].(string)
			if !ok {
				return nil, fmt.Sprintf("has meta key %q set to %s, not a string (quote it)", k, typeName(t[k]))
			}
			m[k] = s
		}
		return nilIfEmpty(m), ""
	}
	s, ok := v.(string)
	if !ok {
		return nil, "is " + typeName(v) + ", not key=value pairs"
	}
	m := map[string]string{}
	for _, item := range strings.Split(s, ",") {
		if item = trimASCIISpace(item); item == "" {
			continue
		}
		k, val, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Sprintf("has item %q without '='", item)
		}
		k = trimASCIISpace(k)
		if _, dup := m[k]; dup {
			return nil, fmt.Sprintf("sets meta key %q twice", k)
		}
		m[k] = trimASCIISpace(val)
	}
	return nilIfEmpty(m), ""
}

// trimASCIISpace trims ASCII white space only: strings.TrimSpace would also
// drop a Unicode space (U+00A0) or NEL (U+0085) at either end, changing a
// value checkMeta accepts, or hiding a control character it refuses.
func trimASCIISpace(s string) string {
	return strings.Trim(s, " \t\n\v\f\r")
}

func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// checkMeta returns the rule m breaks, naming the meta key, or "".
func checkMeta(m map[string]string) string {
	if len(m) > maxMetaPairs {
		return fmt.Sprintf("has %d pairs: at most %d (Consul allows 64 per instance, drainkit writes some itself)", len(m), maxMetaPairs)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k == "" || len(k) > maxMetaKey || strings.ContainsFunc(k, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-')
		}) {
			return fmt.Sprintf("meta key %s must be 1 to %d lower-case letters, digits, '_' and '-' (Consul's rule, lower case because a file's keys are case-insensitive)",
				quoteValue(k), maxMetaKey)
		}
		if why := reservedMeta(k); why != "" {
			return fmt.Sprintf("meta key %q is reserved: %s", k, why)
		}
		v := m[k]
		if len(v) > maxMetaValue {
			return fmt.Sprintf("the value of meta key %q has %d bytes: at most %d (Consul's limit)", k, len(v), maxMetaValue)
		}
		if !utf8.ValidString(v) {
			// Every registry's API is JSON, which turns each invalid byte
			// into U+FFFD: the value would not reach it as given.
			return fmt.Sprintf("the value of meta key %q is not valid UTF-8 (the registries' JSON would replace its invalid bytes)", k)
		}
		if strings.ContainsRune(v, ',') || strings.ContainsFunc(v, isControl) {
			return fmt.Sprintf("the value of meta key %q must not contain ',' (it separates the pairs) or control characters", k)
		}
	}
	return ""
}

// formatMeta renders m as registry.meta's env and flag form: key=value
// pairs sorted by key, separated by commas; "" for none.
func formatMeta(m map[string]string) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(m[k])
	}
	return b.String()
}
