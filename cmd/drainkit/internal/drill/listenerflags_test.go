package drill

import (
	"strings"
	"testing"
)

// TestBindHintNamesTheFlag: a replica that could not bind is reported with
// what the drill sets and how to set the rest; any other failure is not.
func TestBindHintNamesTheFlag(t *testing.T) {
	tail := []string{`grpcservice: --grpc-addr: listen tcp :9090: bind: address already in use`}
	if h := bindHint(tail); !strings.Contains(h, "--exec-arg=--<name>-addr=127.0.0.1:0") {
		t.Errorf("bindHint = %q, want the way to set a listener's address", h)
	}
	if h := bindHint([]string{"panic: boom"}); h != "" {
		t.Errorf("bindHint of an unrelated failure = %q, want none", h)
	}
}

func TestSetsFlag(t *testing.T) {
	args := []string{"serve", "--grpc-addr=127.0.0.1:0", "--web-addr", "x"}
	for flag, want := range map[string]bool{"grpc-addr": true, "web-addr": true, "http-addr": false, "grpc": false} {
		if got := setsFlag(args, flag); got != want {
			t.Errorf("setsFlag(%q) = %v, want %v", flag, got, want)
		}
	}
}
