package drainkit_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if prog := os.Getenv(childProgramEnv); prog != "" {
		// Re-executed by a test as a real service process: run the program
		// instead of the tests.
		os.Exit(childPrograms[prog]())
	}
	goleak.VerifyTestMain(m)
}
