package childtest

import (
	"net"
	"testing"
)

// FreeAddr returns "127.0.0.1:<port>" with a TCP port that was free a moment
// ago, for a child that must listen on a known address (such as a successor
// on its predecessor's address). Another process could take the port before
// the child binds it, which then shows as a failed start. It fails t if no
// port can be had.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
