package registry

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
)

// InstanceID returns a new registry ID for one process's instance of service
// listening on port: "<service>-<hostname>-<port>-<suffix>", where suffix is
// 12 random hex digits drawn once per call. Characters other than letters,
// digits, '-', '_' and '.' are replaced by '-'.
//
// Why each part: the hostname keeps IDs apart across hosts that share a port;
// the random suffix makes every process's ID new, so that a restarted process
// on the same address and port is never confused with its predecessor: the
// predecessor's late deregistration, or the registry's clean-up of its
// expired registration (Consul's DeregisterCriticalServiceAfter), removes
// only the predecessor's ID. Service and port keep the ID readable.
//
// If the hostname cannot be read, "unknown-host" is used; uniqueness then
// rests on the suffix (48 random bits).
func InstanceID(service string, port int) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return sanitize(service) + "-" + sanitize(host) + "-" + strconv.Itoa(port) + "-" + hex.EncodeToString(b[:])
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '-'
	}, s)
}
