package main

import (
	"fmt"
	"math"
	"slices"
)

// Sample is repeated measurements of one figure.
type Sample []float64

// Median returns the median (NaN when empty).
func (s Sample) Median() float64 { return s.Quantile(0.5) }

// Quantile returns the q-quantile, 0 <= q <= 1, by linear interpolation
// between the closest ranks (NaN when empty).
func (s Sample) Quantile(q float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	v := slices.Clone(s)
	slices.Sort(v)
	pos := q * float64(len(v)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return v[lo] + (v[hi]-v[lo])*(pos-float64(lo))
}

// Min and Max return the extremes (NaN when empty).
func (s Sample) Min() float64 { return s.Quantile(0) }
func (s Sample) Max() float64 { return s.Quantile(1) }

// Diff returns s[i] - base[i] for the pairs both have (repeat i of a
// figure against repeat i of its baseline, measured side by side).
func (s Sample) Diff(base Sample) Sample {
	n := min(len(s), len(base))
	d := make(Sample, n)
	for i := range n {
		d[i] = s[i] - base[i]
	}
	return d
}

// Ratio returns s[i] / base[i] for the pairs both have.
func (s Sample) Ratio(base Sample) Sample {
	n := min(len(s), len(base))
	d := make(Sample, n)
	for i := range n {
		d[i] = s[i] / base[i]
	}
	return d
}

// Fmt renders "median (min..max, n=N)" with format f for each number.
func (s Sample) Fmt(f string) string {
	if len(s) == 0 {
		return "n/a"
	}
	if len(s) == 1 {
		return fmt.Sprintf(f+" (n=1)", s[0])
	}
	return fmt.Sprintf(f+" ("+f+".."+f+", n=%d)", s.Median(), s.Min(), s.Max(), len(s))
}
