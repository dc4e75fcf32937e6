package main

import "fmt"

// physicalCase is one drainkit setting of table 5.
type physicalCase struct {
	name string
	args []string
}

// tablePhysical is table 5: drain time against its physical limit, the
// consumers' staleness. Consumers poll readiness every 500 ms and drop a
// replica after 2 failures, so they stop within about 1 s. Three settings
// run side by side (three concurrent drills, as the drill runs its own
// strategies concurrently): the defaults, propagation.min=1s, and a fixed
// sleep of propagation.max (min = max = 12s, the default propagation.max, quiet 0: what a preStop
// `sleep 12` amounts to).
func tablePhysical(e *env) (*Table, error) {
	repeats, rate := 2, "300"
	cases := []physicalCase{
		{"drainkit, defaults", nil},
		{"drainkit, propagation.min=1s", []string{"--propagation-min", "1s"}},
		{"fixed sleep of propagation.max (12s)", []string{"--propagation-min", "12s", "--propagation-quiet", "0s", "--propagation-max", "12s"}},
	}
	if e.quick {
		repeats, rate = 1, "100"
		cases[2] = physicalCase{"fixed sleep of propagation.max (3s, quick)", []string{"--propagation-min", "3s", "--propagation-quiet", "0s", "--propagation-max", "3s"}}
	}
	common := []string{"--strategies", "drainkit", "--replicas", "2", "--rate", rate, "--discovery-interval", "500ms", "--failure-threshold", "2"}
	res := make([][]drillSummary, len(cases))
	for range repeats {
		got, err := e.concurrentDrills(common, cases)
		if err != nil {
			return nil, err
		}
		for i, s := range got {
			res[i] = append(res[i], s)
		}
	}
	t := &Table{Num: 5, Title: "Drain time against its physical limit (consumer staleness), consumers stopping within about 1 s",
		Command: "drainkit drill --strategies drainkit --replicas 2 --rate " + rate + " --discovery-interval 500ms --failure-threshold 2 [--propagation-min 1s | --propagation-min 12s --propagation-quiet 0s --propagation-max 12s] --json",
		Header:  []string{"setting", "failed", "staleness S s", "drain time s", "drain / S", "drain - (S + quiet) s"}}
	for i, c := range cases {
		addPhysicalRow(e, t, i == 1, c.name, res[i])
	}
	t.Note("S is the consumers' staleness the drill measured in the same drill (SIGTERM to the last request a consumer sent the replica); drain time is the median per-replica SIGTERM-to-exit. Ratios and differences are per drill, then median (min..max, n=repeats).")
	t.Note("Target (propagation.min=1s): drain time at most S + quiet (1s) + 0.5 s, and 0 failures.")
	return t, nil
}

func addPhysicalRow(e *env, t *Table, gated bool, name string, runs []drillSummary) {
	var failed, stale, drain, ratio, over Sample
	for _, s := range runs {
		failed = append(failed, float64(s.Failed))
		stale = append(stale, s.Staleness)
		drain = append(drain, s.DrainMedian)
		ratio = append(ratio, s.DrainMedian/s.Staleness)
		over = append(over, s.DrainMedian-(s.Staleness+1))
	}
	target, v := NoTgt, NoTgt
	if gated {
		target, v = "drain <= S + quiet + 0.5 s, 0 failed", verdict(failed.Max() == 0 && over.Max() <= 0.5)
	}
	t.Add(e.quick, target, v, name, failed.Fmt("%.0f"), stale.Fmt("%.3f"), drain.Fmt("%.3f"), ratio.Fmt("%.2f"), over.Fmt("%+.3f"))
}

// concurrentDrills runs one drill per case at once, common flags first,
// and returns each one's drainkit strategy.
func (e *env) concurrentDrills(common []string, cases []physicalCase) ([]drillSummary, error) {
	args := make([][]string, len(cases))
	for i, c := range cases {
		args[i] = append(append([]string(nil), common...), c.args...)
	}
	reps, err := e.parallelDrills(args)
	if err != nil {
		return nil, err
	}
	out := make([]drillSummary, len(cases))
	for i, r := range reps {
		s, ok := r.strategy("drainkit")
		if !ok {
			return nil, fmt.Errorf("%s: drill reported no drainkit strategy", cases[i].name)
		}
		out[i] = s
	}
	return out, nil
}
