package httpdrain

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

// CountNothing hands s hooks that count nothing, for benchmarks that call
// its handler without Serve (which hands it the lifecycle's ServerHooks).
func CountNothing(s *Server) { s.hooks = noHooks{} }

// NoHooks is a lifecycle.ServerHooks that counts nothing, for a server
// driven without a lifecycle's Run.
var NoHooks noHooks

type noHooks struct{}

func (noHooks) Arrived()        {}
func (noHooks) CancelledEarly() {}
