package httpdrain

import "github.com/drainkit/drainkit/lifecycle"

// ReadingConns counts connections whose next HTTP/1.1 request is being read,
// for tests.
func ReadingConns(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		if c.phase.Load() == phReading {
			n++
		}
	}
	return n
}

// NoHooks is a lifecycle.ServerHooks that counts nothing, for a server
// driven without a lifecycle's Run.
var NoHooks lifecycle.ServerHooks = unserved{}
