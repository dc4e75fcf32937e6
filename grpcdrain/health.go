package grpcdrain

import (
	"github.com/drainkit/drainkit/lifecycle"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// setHealth sets the status of the overall service ("") and of the services
// named with WithHealthServices. After the drain's start the health server
// ignores it (health.Server.Shutdown).
func (s *Server) setHealth(st healthpb.HealthCheckResponse_ServingStatus) {
	s.health.SetServingStatus("", st)
	for _, name := range s.services {
		s.health.SetServingStatus(name, st)
	}
}

// applyState maps a lifecycle state to health: SERVING only in READY;
// NOT_SERVING in STARTING and EJECTED; from DRAINING on, NOT_SERVING for
// every service, and later attempts to set SERVING are ignored.
func (s *Server) applyState(st lifecycle.State) {
	switch st {
	case lifecycle.Ready:
		s.setHealth(healthpb.HealthCheckResponse_SERVING)
	case lifecycle.Draining, lifecycle.Stopped:
		s.health.Shutdown()
	default:
		s.setHealth(healthpb.HealthCheckResponse_NOT_SERVING)
	}
}

// followLifecycle keeps health in step with the lifecycle from a
// subscription (Lifecycle.Subscribe: latest wins) until the returned stop function is called;
// stop waits for the goroutine to end.
func (s *Server) followLifecycle() (stop func()) {
	sub, unsubscribe := s.lc.Subscribe()
	quit := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		defer unsubscribe()
		for {
			select {
			case <-quit:
				return
			case t := <-sub:
				s.applyState(t.To)
			}
		}
	}()
	return func() {
		close(quit)
		<-ended
	}
}
