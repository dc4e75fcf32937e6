package grpcresolver

import (
	"encoding/json"
	"strings"
)

// Retry policy for the methods DialOptions is told are idempotent (gRPC A6,
// applied by grpc-go itself): at most 3 attempts, first included, as
// consumer.Options.MaxAttempts' default; UNAVAILABLE (the instance died,
// refused or reset the connection, or is going away) is retried after a
// jittered backoff of 10ms doubling up to 100ms. Retry throttling is the
// retry budget: each failed attempt takes a token out of 20, each success
// puts 0.2 back, and retries stop while 10 or fewer are left, so
// that in the long run retries stay within about 20 % of the calls (as
// consumer.RetryBudget's default), with a burst of 10 for a quiet client.
// Transparent retries of calls that never left the client stay grpc-go's
// and take no token.
var (
	retryPolicy = map[string]any{
		"maxAttempts":          3,
		"initialBackoff":       "0.01s",
		"maxBackoff":           "0.1s",
		"backoffMultiplier":    2,
		"retryableStatusCodes": []string{"UNAVAILABLE"},
	}
	retryThrottling = map[string]any{"maxTokens": 20, "tokenRatio": 0.2}
)

// serviceConfig returns ServiceConfig with the retry policy for the
// idempotent methods, each "package.Service/Method" or "package.Service"
// (every method of it); a leading '/' is ignored. Without methods it is
// ServiceConfig.
func serviceConfig(idempotent []string) string {
	if len(idempotent) == 0 {
		return ServiceConfig
	}
	var sc map[string]any
	if err := json.Unmarshal([]byte(ServiceConfig), &sc); err != nil {
		panic("grpcresolver: ServiceConfig does not parse: " + err.Error()) // a constant: caught by the tests
	}
	names := make([]map[string]string, 0, len(idempotent))
	for _, m := range idempotent {
		svc, method, _ := strings.Cut(strings.TrimPrefix(m, "/"), "/")
		name := map[string]string{"service": svc}
		if method != "" {
			name["method"] = method
		}
		names = append(names, name)
	}
	sc["methodConfig"] = []map[string]any{{"name": names, "retryPolicy": retryPolicy}}
	sc["retryThrottling"] = retryThrottling
	b, err := json.Marshal(sc)
	if err != nil {
		panic("grpcresolver: " + err.Error()) // maps of strings and numbers always marshal
	}
	return string(b)
}
