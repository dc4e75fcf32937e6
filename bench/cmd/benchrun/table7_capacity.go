package main

import (
	"fmt"
	"strconv"
)

// tableCapacity is table 7: the drill's own capacity on this machine. It
// runs the default drill (drainkit, shutdown and exit side by side) at
// rising rates and stops at the first rate whose run was not clean: the
// drill judged it INVALID (failures or failed probes before the first stop,
// pacing lag over 1 s: exit 3, valid false), or the load generator fell
// behind its schedule (more than 5% of the requests sent over 20 ms late) or
// sent less than 95% of rate x load time. drainkit's failures are the
// figure with a target.
func tableCapacity(e *env) (*Table, error) {
	rates := []int{500, 1000, 2000, 4000}
	var extra []string
	if e.quick {
		rates = []int{100, 200}
		extra = []string{"--baseline", "500ms", "--tail", "500ms", "--propagation-min", "500ms", "--propagation-quiet", "200ms"}
	}
	t := &Table{Num: 7, Title: "The drill's own capacity: default drill at rising --rate",
		Command: "drainkit drill --rate R --json",
		Header:  []string{"rate/s", "sent / scheduled", "late sends %", "max lag ms", "clean", "drainkit failed", "shutdown failed", "exit failed"}}
	highest := 0
	for _, rate := range rates {
		r, err := e.drill(append([]string{"--rate", strconv.Itoa(rate)}, extra...)...)
		if err != nil {
			return nil, err
		}
		clean, row := capacityRow(r, rate)
		dk, _ := r.strategy("drainkit")
		target, v := NoTgt, NoTgt
		if clean {
			highest = rate
			target, v = "drainkit 0 failed", verdict(dk.Failed == 0)
		}
		t.Add(e.quick, target, v, row...)
		if !clean && !e.quick { // quick runs every rung, to exercise them
			break
		}
	}
	t.Note("Highest clean rate: %d requests/s (clean: the drill judged the run valid, at least 95%% of the scheduled requests sent and at most 5%% of them over 20 ms late, in every strategy; the ladder stops at the first unclean rate).", highest)
	t.Note("Shutdown and exit fail by design; they show what the same load does to the strategies users would otherwise use. sent / scheduled and late sends are the worst over the three strategies, all measured in the same drill.")
	return t, nil
}

// capacityRow judges one drill's load and renders its row.
func capacityRow(r *drillReport, rate int) (bool, []string) {
	worstSent, worstLate, worstLag := 1e9, 0.0, 0.0
	for _, s := range r.Strategies {
		scheduled := float64(rate) * (s.LoadEnd - s.LoadStart)
		if scheduled > 0 {
			worstSent = min(worstSent, float64(s.Requests)/scheduled)
		}
		if s.Requests > 0 {
			worstLate = max(worstLate, 100*float64(s.LateSends)/float64(s.Requests))
		}
		worstLag = max(worstLag, s.MaxLagMs)
	}
	clean := r.Valid && worstSent >= 0.95 && worstLate <= 5
	failed := func(name string) string {
		if s, ok := r.strategy(name); ok {
			return strconv.Itoa(s.Failed)
		}
		return "-"
	}
	return clean, []string{strconv.Itoa(rate), fmt.Sprintf("%.3f", worstSent), fmt.Sprintf("%.2f", worstLate),
		fmt.Sprintf("%.1f", worstLag), fmt.Sprint(clean), failed("drainkit"), failed("shutdown"), failed("exit")}
}
