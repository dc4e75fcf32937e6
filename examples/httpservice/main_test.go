package main

// Acceptance tests of issue 2: each runs the example binary as a real child
// process, talks to it over 127.0.0.1 and sends it real signals.

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/drainkit/drainkit/internal/childtest"
)

// binary is the example built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	bin, remove, err := childtest.Build("github.com/drainkit/drainkit/examples/httpservice")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = bin
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		remove()
		os.Exit(code)
	}))
}
