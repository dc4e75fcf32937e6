package prestop

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDialAddr(t *testing.T) {
	for in, want := range map[string]string{
		":8081":          "127.0.0.1:8081",
		"0.0.0.0:8081":   "127.0.0.1:8081",
		"[::]:8081":      "127.0.0.1:8081",
		"127.0.0.1:9000": "127.0.0.1:9000",
		"[::1]:9000":     "[::1]:9000",
		"localhost:9000": "localhost:9000",
	} {
		if got, err := DialAddr(in); err != nil || got != want {
			t.Errorf("DialAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := DialAddr("8081"); err == nil {
		t.Error("DialAddr(\"8081\"): no error")
	}
}
