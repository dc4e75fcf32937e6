package drill

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Replica ports come from below the kernel's ephemeral range, so that a port
// handed to a replica can never be the source port of one of the drill's own
// outgoing connections, and are never handed out twice in one process: a
// stale consumer must not reach a new replica that took an old one's port.
var ports struct {
	mu   sync.Mutex
	used map[int]bool
}

// freePort returns a loopback address with a port that was free a moment ago.
// Another process may still take it before the replica binds it; Start
// retries with new ports when a replica dies before it is ready.
func freePort() (string, error) {
	lo, hi := 20000, ephemeralLow()
	if hi-lo < 1000 {
		lo, hi = 10000, 20000
	}
	ports.mu.Lock()
	defer ports.mu.Unlock()
	if ports.used == nil {
		ports.used = map[int]bool{}
	}
	for range 200 {
		p := lo + rand.IntN(hi-lo)
		if ports.used[p] {
			continue
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		_ = ln.Close()
		ports.used[p] = true
		return addr, nil
	}
	return "", fmt.Errorf("no free loopback port in %d-%d after 200 tries", lo, hi)
}

// ephemeralLow reads the low end of the kernel's ephemeral port range
// (Linux default 32768).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 1024 {
		return 32768
	}
	return n
}
