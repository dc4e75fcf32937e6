// Package budget is the lifecycle's time budget (DESIGN.md section 3): how
// long each phase of an instance's life may take (Timings: warm-up, the
// propagation window, the drain, the stop hooks, the grace period around
// them), how often and how long its readiness checks run (CheckOptions),
// their defaults and allowed ranges, and the arithmetic that checks the
// phases fit the grace period. It is the one source of truth for that
// arithmetic: lifecycle enforces it, config maps configuration keys onto it,
// and `drainkit check` compares it with a Kubernetes manifest.
//
// RangeError, the error of a value outside its allowed range, is shared by
// every drainkit setting (probes, the registry plugins), so that a caller can
// name the key of any bad setting the same way.
//
// Out of scope: reading settings (package config) and running the drain
// (package lifecycle).
package budget
