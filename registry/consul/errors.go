package consul

import (
	"errors"
	"net/http"
	"strings"

	"github.com/hashicorp/consul/api"
)

// lostInstance reports whether err says that the agent does not know this
// instance's service or check: the agent was restarted without its state, or
// reaped the service after DeregisterCriticalServiceAfter. Consul 1.x
// answers 404 "Unknown check ID ..." (check update) or "Unknown service ID
// ..." (maintenance, deregister); older agents answered 500 "CheckID ... does
// not have associated TTL". Anything else (403 ACL denied, timeouts, 5xx) is
// an ordinary failure that is retried without registering again.
func lostInstance(err error) bool {
	var se api.StatusError
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case http.StatusNotFound:
		return strings.Contains(se.Body, "Unknown check ID") || strings.Contains(se.Body, "Unknown service ID") ||
			strings.Contains(se.Body, "No service registered")
	case http.StatusInternalServerError:
		return strings.Contains(se.Body, "does not have associated TTL")
	}
	return false
}
