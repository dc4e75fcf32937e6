package probes

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// authorizer applies the loopback-or-token rule to the operator actions: with
// no token configured only loopback peers are accepted; with a token, every
// caller (loopback included) must present it as a bearer token.
type authorizer struct {
	hasToken bool
	sum      [sha256.Size]byte // hash of the token, so the comparison's time does not depend on its length
}

func newAuthorizer(token string) authorizer {
	if token == "" {
		return authorizer{}
	}
	return authorizer{hasToken: true, sum: sha256.Sum256([]byte(token))}
}

// authorize returns 0 when r may proceed, else the status code and a message
// for the caller. Every refusal is 403 Forbidden (DESIGN.md section 2); a
// missing token also gets a Bearer challenge (see action). It never echoes
// the presented credential.
func (a authorizer) authorize(r *http.Request) (code int, msg string) {
	if a.hasToken {
		got, ok := bearer(r.Header.Get("Authorization"))
		if !ok {
			return http.StatusForbidden, "a bearer token is required: send Authorization: Bearer <token>"
		}
		sum := sha256.Sum256([]byte(got))
		if subtle.ConstantTimeCompare(sum[:], a.sum[:]) != 1 {
			return http.StatusForbidden, "the bearer token is not valid"
		}
		return 0, ""
	}
	if !loopbackPeer(r.RemoteAddr) {
		return http.StatusForbidden, "only loopback peers (127.0.0.0/8, ::1) may call this endpoint; configure an admin token to allow other callers"
	}
	if !loopbackHost(r.Host) {
		// A browser page whose name was rebound to 127.0.0.1 would reach us
		// from a loopback peer with its own name in Host.
		return http.StatusForbidden, "the Host header must be a loopback address or localhost"
	}
	return 0, ""
}

// bearer extracts the token of an "Authorization: Bearer <token>" header. The
// scheme is case-insensitive (RFC 7235).
func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// loopbackPeer reports whether a RemoteAddr ("ip:port") is a loopback address,
// IPv4-mapped IPv6 included. Forwarding headers are deliberately ignored: do
// not put the admin listener behind a proxy on the same host.
func loopbackPeer(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// loopbackHost reports whether a Host header names localhost or a loopback
// address.
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
