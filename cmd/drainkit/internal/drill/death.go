package drill

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// ReplicaDeath is a replica that ended without the drill stopping it: it
// exited (crashed) before it was ready or while it served, or never became
// ready and was killed. The drill says which, how it ended and what it
// wrote last, instead of a table of zeros.
type ReplicaDeath struct {
	Replica int    `json:"replica"`
	Role    string `json:"role"`
	// Attempt counts the starts of this replica (a replica that dies before
	// it is ready is started again with new ports, up to three times).
	Attempt int `json:"attempt"`
	// At is when it ended, from the drill's start; Lived how long after its
	// start.
	At    float64 `json:"at_s"`
	Lived float64 `json:"lived_s"`
	// BeforeReady is true when it never answered GET /readyz with 200.
	BeforeReady bool `json:"before_ready"`
	// ExitStatus is how it ended ("exit status 2", "signal: segmentation
	// fault", "not ready within 1m10s: killed by the drill").
	ExitStatus string `json:"exit_status"`
	// Stderr are its last lines on stderr.
	Stderr []string `json:"stderr_tail"`
}

// death describes r, which ended without being stopped.
func death(r *Replica, role string, attempt int, start time.Time, beforeReady bool, status string) ReplicaDeath {
	started, _, _, exited := r.Times()
	return ReplicaDeath{
		Replica: r.ID, Role: role, Attempt: attempt,
		At: secs(exited.Sub(start)), Lived: secs(exited.Sub(started)),
		BeforeReady: beforeReady, ExitStatus: status, Stderr: r.StderrTail(),
	}
}

// exitStatus is how r ended: "exit status 0" or its exit error.
func exitStatus(r *Replica) string {
	if err := r.ExitErr(); err != nil {
		return err.Error()
	}
	return "exit status 0"
}

// deathGroup is deaths alike but for the replica: the same moment of
// their life, the same end and the same last words.
type deathGroup struct {
	first    ReplicaDeath
	replicas []string
	starts   int
}

func (d ReplicaDeath) key() string {
	return fmt.Sprint(d.BeforeReady, "\x00", d.ExitStatus, "\x00", strings.Join(d.Stderr, "\n"))
}

// groupDeaths groups alike deaths, in the order of their first.
func groupDeaths(deaths []ReplicaDeath) []*deathGroup {
	var out []*deathGroup
	by := map[string]*deathGroup{}
	for _, d := range deaths {
		g, ok := by[d.key()]
		if !ok {
			g = &deathGroup{first: d}
			by[d.key()] = g
			out = append(out, g)
		}
		g.starts++
		if r := fmt.Sprintf("r%d", d.Replica); !slices.Contains(g.replicas, r) {
			g.replicas = append(g.replicas, r)
		}
	}
	return out
}

// String is one line: "r1, r2 (3 starts) ended before they were ready,
// without being stopped, 0.01s after their start: exit status 2".
func (g *deathGroup) String() string {
	when := "while serving"
	if g.first.BeforeReady {
		when = "before ready"
	}
	return fmt.Sprintf("%s (%s) ended %s, without being stopped, %.2fs after start (first at %.2fs): %s",
		strings.Join(g.replicas, ", "), plural(int64(g.starts), "start", "starts"), when, g.first.Lived, g.first.At, g.first.ExitStatus)
}

// writeDeaths writes each group of deaths with its last stderr lines.
func writeDeaths(b *strings.Builder, deaths []ReplicaDeath) {
	for _, g := range groupDeaths(deaths) {
		fmt.Fprintf(b, "  %s\n", g)
		if len(g.first.Stderr) == 0 {
			b.WriteString("    (nothing on stderr)\n")
			continue
		}
		b.WriteString("    last stderr lines:\n")
		for _, l := range g.first.Stderr {
			fmt.Fprintf(b, "      %s\n", l)
		}
	}
}
