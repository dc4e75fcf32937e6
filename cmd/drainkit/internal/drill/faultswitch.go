package drill

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"
)

// switchOn inflicts a fault of kind on victim now through the built-in
// example's switch file (the slow-probe scenario's blocking check, the
// brownout scenario's hang): it marks the replica faulted, records the
// event and creates blockDir/<its HTTP port>. Without blockDir (an --exec
// binary has no switch) only the event is recorded. what names the fault
// in an error.
func (s *strategyRun) switchOn(victim *Replica, kind, what string) error {
	s.mu.Lock()
	s.faulted[victim.ID] = true
	s.mu.Unlock()
	s.events.fault(kind, victim, time.Now())
	if s.blockDir == "" {
		return nil
	}
	_, port, _ := net.SplitHostPort(victim.HTTPAddr)
	if err := os.WriteFile(filepath.Join(s.blockDir, port), nil, 0o600); err != nil {
		return fmt.Errorf("%s: %s r%d: %w", s.name, what, victim.ID, err)
	}
	return nil
}
