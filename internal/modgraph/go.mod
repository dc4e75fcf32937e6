// A module of its own, so that what the tests need to read a module graph
// (x/mod's semver) is no requirement of the root module they measure.
module github.com/drainkit/drainkit/internal/modgraph

go 1.25.0

require (
	go.uber.org/goleak v1.3.0
	golang.org/x/mod v0.20.0
)
