package probes

import "testing"

func TestLoopbackPeer(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:1":          true,
		"127.8.9.10:80":        true,
		"[::1]:8081":           true,
		"[::ffff:127.0.0.1]:1": true,
		"10.0.0.1:1":           false,
		"[2001:db8::1]:1":      false,
		"[::ffff:10.0.0.1]:1":  false,
		"0.0.0.0:1":            false,
		"localhost:1":          false, // RemoteAddr is always an IP; a name is suspicious
		"garbage":              false,
		"":                     false,
	} {
		if got := loopbackPeer(addr); got != want {
			t.Errorf("loopbackPeer(%q) = %v, want %v", addr, got, want)
		}
	}
}
