// Package modgraph holds the tests that keep drainkit light for the
// programs that import it (issue 19): each builds a throwaway module that
// imports some of drainkit's packages, resolved from this checkout through
// replace directives (GOWORK=off, GOFLAGS=-mod=mod), and measures what that
// program pays: the modules in its `go mod graph`, and the size of its
// binary. The package has no code of its own.
package modgraph
