package main

import (
	"fmt"
	"slices"
	"strings"
)

// overheadGroup is one request path with its benchmarks and targets.
type overheadGroup struct {
	label    string
	funcs    []string // benchmark functions, any of which may be absent
	maxNs    float64  // drainkit's ns/op minus bare's, at most
	maxAlloc float64  // drainkit's allocs/op (absolute when absAlloc, else minus bare's), at most
	absAlloc bool
}

var overheadGroups = []overheadGroup{
	{"HTTP middleware (httpdrain)", []string{"BenchmarkHandler"}, 15, 0, true},
	{"gRPC interceptors (grpcdrain)", []string{"BenchmarkUnaryInterceptor", "BenchmarkStreamInterceptor", "BenchmarkInterceptor", "BenchmarkInterceptors"}, 20, 0, true},
	{"consumer RoundTripper", []string{"BenchmarkRoundTripper"}, 1000, 2, false},
}

// tableOverhead is table 2: the request path's cost against a bare handler,
// server or transport, from the packages' Go benchmarks.
func tableOverhead(e *env) (*Table, error) {
	count, benchtime := 6, "250ms"
	if e.quick {
		count, benchtime = 1, "2000x"
	}
	var all []string
	for _, g := range overheadGroups {
		all = append(all, g.funcs...)
	}
	res, found, err := e.goBench(count, benchtime, all...)
	if err != nil {
		return nil, err
	}
	t := &Table{Num: 2, Title: "Request-path overhead against bare (Go benchmarks)",
		Command: fmt.Sprintf("go test -run '^$' -bench '^(%s)$' -benchmem -count %d -benchtime %s PKGS", strings.Join(all, "|"), count, benchtime),
		Header:  []string{"path", "benchmark (variant at *)", "variant", "ns/op", "ns/op - bare's", "B/op", "allocs/op"}}
	ns, bytes, allocs := series(res, "ns/op"), series(res, "B/op"), series(res, "allocs/op")
	for _, g := range overheadGroups {
		var names []string
		for n := range ns {
			if slices.ContainsFunc(g.funcs, func(f string) bool { return strings.HasPrefix(n, f+"/") }) {
				names = append(names, n)
			}
		}
		if !slices.ContainsFunc(g.funcs, func(f string) bool { return found[f] != "" }) {
			t.Add(e.quick, overheadTarget(g), "not available", g.label, strings.Join(g.funcs, ", "), "-", "not merged yet", "-", "-", "-")
			continue
		}
		fam := families(names, "bare")
		keys := make([]string, 0, len(fam))
		for k := range fam {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int {
			return strings.Compare(strings.Replace(a, "/seq", "/0seq", 1), strings.Replace(b, "/seq", "/0seq", 1))
		})
		for _, k := range keys {
			addOverheadRows(e, t, g, k, fam[k], ns, bytes, allocs)
		}
	}
	t.Note("ns/op - bare's is paired per repeat (go test -count runs every variant of a benchmark once per repeat), then summarised: median (min..max, n=repeats).")
	t.Note("seq: one goroutine; parallel: b.RunParallel with GOMAXPROCS goroutines. promhttp_inflight and otelhttp are the reference middlewares users would use instead.")
	return t, nil
}

func overheadTarget(g overheadGroup) string {
	if g.absAlloc {
		return fmt.Sprintf("<= %.0f ns, %.0f allocs", g.maxNs, g.maxAlloc)
	}
	return fmt.Sprintf("<= %.0f ns, <= %.0f allocs more", g.maxNs, g.maxAlloc)
}

func addOverheadRows(e *env, t *Table, g overheadGroup, fam string, variants map[string]string, ns, bytes, allocs map[string]Sample) {
	bare := variants["bare"]
	order := []string{"bare"}
	for v := range variants {
		if v != "bare" {
			order = append(order, v)
		}
	}
	slices.Sort(order[1:])
	for _, v := range order {
		n := variants[v]
		d := ns[n].Diff(ns[bare])
		target, verd := NoTgt, NoTgt
		if v == "drainkit" {
			a := allocs[n]
			if !g.absAlloc {
				a = a.Diff(allocs[bare])
			}
			target, verd = overheadTarget(g), verdict(d.Median() <= g.maxNs && a.Max() <= g.maxAlloc)
		}
		diff := d.Fmt("%+.1f")
		if v == "bare" {
			diff = "baseline"
		}
		t.Add(e.quick, target, verd, g.label, fam, v, ns[n].Fmt("%.1f"), diff, bytes[n].Fmt("%.0f"), allocs[n].Fmt("%.0f"))
	}
}
