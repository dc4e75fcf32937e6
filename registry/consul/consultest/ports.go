package consultest

import (
	"errors"
	"fmt"
	"net"
)

// freePorts picks four distinct loopback ports that are free for TCP, and
// for UDP too where Serf needs it. The listeners are held until all four are
// chosen, then released; another process could still take one before the
// agent binds it, which then shows as a failed start.
func freePorts() (ports, error) {
	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	pick := func(udp bool) (int, error) {
		for range 50 {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return 0, err
			}
			port := l.Addr().(*net.TCPAddr).Port
			if !udp {
				closers = append(closers, func() { l.Close() })
				return port, nil
			}
			u, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				l.Close()
				continue
			}
			closers = append(closers, func() { l.Close(); u.Close() })
			return port, nil
		}
		return 0, errors.New("consultest: no free loopback port for TCP and UDP")
	}
	var p ports
	var err error
	if p.http, err = pick(false); err != nil {
		return p, err
	}
	if p.server, err = pick(false); err != nil {
		return p, err
	}
	if p.serfLAN, err = pick(true); err != nil {
		return p, err
	}
	if p.serfWAN, err = pick(true); err != nil {
		return p, err
	}
	return p, nil
}
