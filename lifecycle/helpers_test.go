package lifecycle

import (
	"io"
	"log/slog"
	"net/netip"
	"testing"
)

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newTest returns a Lifecycle with o, logging nowhere unless o says.
func newTest(t *testing.T, o Options) *Lifecycle {
	t.Helper()
	if o.Logger == nil {
		o.Logger = discard()
	}
	l, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustMove(t *testing.T, l *Lifecycle, to State) {
	t.Helper()
	if _, err := l.transition(to, CauseWarmup, "test", nil); err != nil {
		t.Fatal(err)
	}
}

// hooks returns the ServerHooks that Run hands to l's servers.
func hooks(l *Lifecycle) ServerHooks { return (*serverHooks)(l) }

// caller returns the Caller of ip (an IPv4 address) with identity.
func caller(ip, identity string) Caller {
	return Caller{IP: netip.MustParseAddr(ip), Identity: identity}
}

// benchCaller is a caller as httpdrain reports one.
var benchCaller = caller("10.1.2.3", "Go-http-client/1.1")
