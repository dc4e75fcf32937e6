package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// anchorService is one service drilled with `drainkit drill --exec`.
type anchorService struct {
	name, bin string
}

// anchorServices lists drainkit's example first, then the anchors; plain
// http.Server.Shutdown is the baseline of the differences.
func (e *env) anchorServices() []anchorService {
	return []anchorService{
		{"drainkit (examples/httpservice)", e.bin[binExample]},
		{"plain http.Server.Shutdown", e.bin[binPlain]},
		{"kratos v2.8.3", e.bin[binKratos]},
		{"go-zero v1.10.3", e.bin[binGoZero]},
	}
}

// tableDrill is table 1: the rolling-restart drill against each service at
// each rate, repeated, the services interleaved within every repeat so that
// they share the machine's conditions.
func tableDrill(e *env) (*Table, error) {
	if err := e.ensureBuilt(); err != nil {
		return nil, err
	}
	rates, repeats := []int{300, 1000}, 3
	extra := []string{"--baseline", "1s", "--tail", "1s"}
	if e.quick {
		rates, repeats = []int{100}, 1
		extra = []string{"--baseline", "500ms", "--tail", "500ms", "--propagation-min", "500ms", "--propagation-quiet", "200ms"}
	}
	t := &Table{Num: 1, Title: "Rolling drain against the anchors (drainkit drill --exec, 3 replicas, readiness-polling discovery)",
		Command: "drainkit drill --exec BIN --rate R --baseline 1s --tail 1s --json (BIN: go build ./examples/httpservice; go build -C bench/anchors ./kratos ./gozero ./plain)",
		Header:  []string{"service", "rate/s", "failed requests", "failed %", "drain time s (per replica)", "drain time - plain's, s", "failures by kind (all repeats)", "late sends %"}}
	for _, rate := range rates {
		res := map[string]*drillSamples{}
		for i := 0; i < repeats; i++ {
			if err := drillRepeat(e, rate, extra, res); err != nil {
				return nil, err
			}
		}
		addDrillRows(e, t, rate, res)
	}
	t.Note("Per repeat, the four services are drilled one after another; load runs 1 s before the rolling restart and at least 1 s after it (--baseline 1s --tail 1s), then until no consumer lists a replaced replica.")
	t.Note("Every figure: median (min..max, n=repeats). Drain time: SIGTERM to exit of each replaced replica; its difference is per repeat against plain Shutdown in the same repeat.")
	t.Note("drainkit runs with the library's default timings (propagation.min 5s, quiet 1s): its drain time is the propagation window, by design. The anchors get DRAINKIT_DRAIN_TIMEOUT as their shutdown deadline and ignore the other keys (they have no propagation window).")
	t.Note("Late sends: requests the drill's load generator sent over 20 ms behind schedule; a high figure means the machine, not the service, limited that drill (see table 7).")
	t.Note("Target: drainkit 0 failed requests in every repeat; the anchors are the reference.")
	return t, nil
}

// drillRepeat runs one repeat at rate: each service in turn, so that the
// services of a repeat share the machine's conditions without loading it
// together (three anchors drilled side by side at 1,000 requests/s
// overloaded the load generator on the reference machine).
func drillRepeat(e *env, rate int, extra []string, res map[string]*drillSamples) error {
	for _, s := range e.anchorServices() {
		if res[s.name] == nil {
			res[s.name] = &drillSamples{}
		}
		r, err := validDrill(e, res[s.name], append([]string{"--exec", s.bin, "--rate", strconv.Itoa(rate)}, extra...))
		if err != nil {
			return err
		}
		res[s.name].add(r.only())
	}
	return nil
}

// invalidRetries is how often a drill the drill itself judged INVALID (the
// machine could not sustain it: failures before the first stop, pacing lag)
// is run again before its figures are used as they are.
const invalidRetries = 2

// validDrill runs the drill, again while it judges itself INVALID (at most
// invalidRetries more times), counting the invalid runs in d.
func validDrill(e *env, d *drillSamples, args []string) (*drillReport, error) {
	for try := 0; ; try++ {
		r, err := e.drill(args...)
		if err != nil || r.Valid || try == invalidRetries {
			return r, err
		}
		d.invalid++
	}
}

// drillSamples collects one service's repeats.
type drillSamples struct {
	failed, failedPct, drain Sample
	late                     Sample         // % of requests sent over 20 ms late
	kinds                    map[string]int // failures by kind, all repeats
	invalid                  int            // drills judged INVALID and run again
}

func (d *drillSamples) add(s drillSummary) {
	d.failed = append(d.failed, float64(s.Failed))
	pct := 0.0
	if s.Requests > 0 {
		pct = 100 * float64(s.Failed) / float64(s.Requests)
	}
	d.failedPct = append(d.failedPct, pct)
	late := 0.0
	if s.Requests > 0 {
		late = 100 * float64(s.LateSends) / float64(s.Requests)
	}
	d.late = append(d.late, late)
	d.drain = append(d.drain, s.DrainMedian)
	if d.kinds == nil {
		d.kinds = map[string]int{}
	}
	for k, n := range s.ByKind {
		d.kinds[k] += n
	}
}

// kindList renders failures by kind, e.g. "refused 12, timeout 3".
func (d *drillSamples) kindList() string {
	keys := slices.Sorted(maps.Keys(d.kinds))
	var parts []string
	for _, k := range keys {
		if d.kinds[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, d.kinds[k]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func addDrillRows(e *env, t *Table, rate int, res map[string]*drillSamples) {
	base := res[e.anchorServices()[1].name]
	for i, s := range e.anchorServices() {
		d := res[s.name]
		target, v := NoTgt, NoTgt
		if i == 0 {
			target, v = "0 failed", verdict(d.failed.Max() == 0)
		}
		t.Add(e.quick, target, v, s.name, strconv.Itoa(rate), d.failed.Fmt("%.0f"), d.failedPct.Fmt("%.2f"),
			d.drain.Fmt("%.3f"), d.drain.Diff(base.drain).Fmt("%+.3f"), d.kindList(), d.late.Fmt("%.1f"))
		if d.invalid > 0 {
			t.Note("%s at %d/s: %d drill(s) judged INVALID by the drill (the machine fell behind) and run again.", s.name, rate, d.invalid)
		}
	}
}
