package httpdrain_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(idleHolderEnv); addr != "" {
		os.Exit(idleHolderMain(addr))
	}
	goleak.VerifyTestMain(m)
}
