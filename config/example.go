package config

import (
	"fmt"
	"strings"
)

// Example returns a sample YAML configuration file with every key set to its
// default and a comment per key giving its meaning, allowed range,
// environment variable and flag. Load accepts it as is.
func Example() string {
	d := Default()
	var b strings.Builder
	b.WriteString("# drainkit configuration (YAML; TOML and JSON use the same keys).\n")
	b.WriteString("# Precedence: flags > DRAINKIT_* environment variables > this file > defaults.\n")
	b.WriteString("# Durations use Go syntax: 300ms, 5s, 1m30s; a number needs a unit (only 0 may omit it).\n")
	b.WriteString("# Budget: propagation.max + drain.timeout + stop.timeout + margin <= grace_period.\n")
	b.WriteString("#   " + d.Describe() + "\n")
	section := ""
	for _, k := range keys {
		top, leaf, nested := strings.Cut(k.name, ".")
		if !nested {
			top, leaf = "", k.name
		}
		if top != section {
			b.WriteString("\n")
			if top != "" {
				b.WriteString(top + ":\n")
			}
			section = top
		}
		indent := ""
		if top != "" {
			indent = "  "
		}
		fmt.Fprintf(&b, "%s# %s.\n%s# Range: %s. Env %s, flag --%s.\n", indent, k.help, indent, k.allowed, EnvVar(k.name), FlagName(k.name))
		val := k.format(d)
		switch k.kind {
		case kindString, kindMeta:
			val = fmt.Sprintf("%q", val)
		case kindSecret:
			val = `""`
		}
		fmt.Fprintf(&b, "%s%s: %s\n", indent, leaf, val)
	}
	return b.String()
}

// Describe returns the grace-period budget in one line, e.g.
// "grace_period 25s >= propagation.max 12s + drain.timeout 6s + stop.timeout 3s + margin 2.5s = 23.5s (1.5s to spare)".
func (c *Config) Describe() string {
	t := c.Timings
	need := t.PropagationMax + t.DrainTimeout + t.StopTimeout + t.Margin()
	rel, spare := ">=", fmt.Sprintf("%s to spare", formatDuration(t.GracePeriod-need))
	if need > t.GracePeriod {
		rel, spare = "<", fmt.Sprintf("%s short", formatDuration(need-t.GracePeriod))
	}
	return fmt.Sprintf("grace_period %s %s propagation.max %s + drain.timeout %s + stop.timeout %s + margin %s = %s (%s)",
		formatDuration(t.GracePeriod), rel, formatDuration(t.PropagationMax), formatDuration(t.DrainTimeout),
		formatDuration(t.StopTimeout), formatDuration(t.Margin()), formatDuration(need), spare)
}
