// Package middleware holds BenchmarkHandler, the per-request cost of
// httpdrain's in-flight tracking beside promhttp's and otelhttp's
// middlewares (BENCHMARKS.md, table 2). It lives in the bench module so that
// the root module's go.mod does not require Prometheus or OpenTelemetry for
// a benchmark's baselines.
package middleware
