package config

// Closest returns the candidate closest to name by edit distance (an
// insertion, deletion, substitution or swap of two adjacent bytes counting
// 1), if that distance is at most max, else "". The first candidate wins a
// tie. It is the "did you mean" of a mistyped key, variable or flag: one
// rule for all three.
func Closest(name string, candidates []string, max int) string {
	best, bestD := "", max+1
	for _, c := range candidates {
		if d := distance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
