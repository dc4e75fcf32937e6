package httpdrain

import (
	"net/http"
	"testing"
)

func TestCallerOf(t *testing.T) {
	for _, c := range []struct{ addr, want string }{
		{"10.1.2.3:40312", "10.1.2.3"},
		{"[2001:db8::1]:443", "2001:db8::1"},
		{"[::ffff:10.1.2.3]:1", "10.1.2.3"},
		{"not an address", "invalid IP"},
	} {
		r := &http.Request{RemoteAddr: c.addr, Header: http.Header{"User-Agent": {"slow-consumer/1.0"}}}
		got := callerOf(r)
		if got.IP.String() != c.want || got.Identity != "slow-consumer/1.0" {
			t.Errorf("callerOf(%q) = %v %q, want %s slow-consumer/1.0", c.addr, got.IP, got.Identity, c.want)
		}
	}
	// The drainkit consumer header names the consumer in place of the
	// User-Agent (package consumer sends it).
	named := &http.Request{RemoteAddr: "10.1.2.3:40312", Header: http.Header{"User-Agent": {"Go-http-client/1.1"}, "Drainkit-Consumer": {"billing"}}}
	if got := callerOf(named); got.Identity != "billing" {
		t.Errorf("callerOf with Drainkit-Consumer: identity %q, want billing", got.Identity)
	}
	if n := testing.AllocsPerRun(1000, func() { _ = callerOf(named) }); n != 0 {
		t.Errorf("callerOf with Drainkit-Consumer allocates %v per request", n)
	}
	r := &http.Request{RemoteAddr: "10.1.2.3:40312", Header: http.Header{"User-Agent": {"Go-http-client/1.1"}}}
	if n := testing.AllocsPerRun(1000, func() { _ = callerOf(r) }); n != 0 {
		t.Errorf("callerOf allocates %v per request", n)
	}
}
