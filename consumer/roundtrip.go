package consumer

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// outReq is one attempt's request: the caller's, with the instance as
// host. One allocation holds both.
type outReq struct {
	r http.Request
	u url.URL
}

// RoundTrip sends req to an instance of the service named by req.URL.Host
// and returns its response (any HTTP status). A request fails over to
// another instance, at most Options.MaxAttempts tries in all:
//
//   - at once, whatever its method, when it failed before any byte of it
//     was written (the dial was refused or timed out);
//   - when it failed after being written (connection reset, cut before the
//     response) only if Options.WrittenRetry allows and the request is
//     idempotent (see RetryIdempotent);
//   - when the answer came from another service (a provider built on
//     drainkit names itself in the header registry.IdentityHeader on every
//     response), under the same rule as a written request: that service
//     may have run it (a route of the same name), so only an idempotent
//     request is sent again. The answer is discarded, never returned, and
//     the address ejected at once either way; the error of a request not
//     sent again wraps ErrWrongService.
//
// Every retry is taken from the retry budget; a request with a body is
// retried only if req.GetBody is set (http.NewRequest sets it for
// in-memory bodies). A request cancelled by its context is not retried.
// Before the Watcher's first view, RoundTrip waits for it (bounded by the
// request's context). When every untried candidate is ejected, one of them
// is tried anyway (panic routing) rather than none. The error is the last
// attempt's; ErrNoInstance when the view has no instance left to try,
// ErrDegraded with FailFast while degraded.
//
// With Options.MeterProvider or TracerProvider, each call is counted by
// outcome and stage and traced (see Options.MeterProvider).
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.tel != nil {
		return t.tel.roundTrip(req)
	}
	return t.roundTrip(req, nil)
}

// roundTrip is RoundTrip's body; c records the call's telemetry (nil: none).
func (t *Transport) roundTrip(req *http.Request, c *call) (*http.Response, error) {
	if req.URL == nil || req.URL.Host != t.service {
		closeBody(req.Body)
		return nil, fmt.Errorf("consumer: request for host %q: this Transport serves %q (use http://%s/...)", hostOf(req), t.service, t.service)
	}
	if t.opts.FailFast && t.w.Degraded() {
		closeBody(req.Body)
		t.failures.Add(1)
		return nil, ErrDegraded
	}
	if err := t.w.snapshotErr(); err != nil { // a snapshot from start, now older than MaxStaleness
		closeBody(req.Body)
		t.failures.Add(1)
		return nil, err
	}
	if !t.viewed.Load() {
		if err := t.w.Wait(req.Context()); err != nil {
			closeBody(req.Body)
			t.failures.Add(1)
			return nil, fmt.Errorf("%w: %w", ErrNoInstance, err)
		}
	}
	requests := t.requests.Add(1)
	out, _ := req.Context().Value(outcomeKey{}).(*Outcome)
	var tried [maxAttemptsLimit]*endpoint
	body := req.Body
	var lastErr error
	for n := 0; n < t.opts.MaxAttempts; n++ {
		ep, probe, err := t.pick(t.set.Load(), tried[:n])
		if err != nil {
			closeBody(body)
			t.failures.Add(1)
			if lastErr != nil {
				err = fmt.Errorf("%w; last attempt: %w", err, lastErr)
			}
			return nil, err
		}
		if ep == nil {
			break
		}
		tried[n] = ep
		c.picked(ep, n+1, probe)
		if out != nil {
			out.Addr, out.Attempts = ep.addr, n+1
		}
		resp, err := t.attempt(ep, req, body)
		if err == nil {
			if err = t.checkIdentity(ep, resp); err == nil {
				t.succeeded(ep, probe)
				return resp, nil
			}
		}
		lastErr = err
		c.failed(req, ep, err)
		if body, err = t.retryable(ep, probe, req, err, requests, n+1, c); err != nil {
			t.failures.Add(1)
			return nil, err
		}
	}
	closeBody(body)
	t.failures.Add(1)
	return nil, t.noInstance(lastErr)
}

// attempt sends one try of req to ep.
func (t *Transport) attempt(ep *endpoint, req *http.Request, body io.ReadCloser) (*http.Response, error) {
	o := &outReq{r: *req, u: *req.URL}
	o.u.Host = ep.addr
	o.r.URL, o.r.Body = &o.u, body
	o.r.Header = t.named.of(req.Header)
	if t.opts.Balancing == LeastRequest {
		ep.inflight.Add(1)
		defer ep.inflight.Add(-1)
	}
	resp, err := ep.tr.RoundTrip(&o.r)
	if resp != nil {
		resp.Request = req // redirects resolve against the service's URL
	}
	return resp, err
}

// retryable records a failed attempt and decides on a retry: it returns the
// body for the next attempt, or the error to give the caller.
func (t *Transport) retryable(ep *endpoint, probe bool, req *http.Request, err error, requests uint64, tries int, c *call) (io.ReadCloser, error) {
	if req.Context().Err() != nil {
		t.abandoned(ep, probe)
		return nil, err
	}
	t.failed(ep, probe, misidentified(err))
	// An answer from another service is a written request like any other:
	// a route of the same name there ran it.
	if tries >= t.opts.MaxAttempts || !notWritten(err) && !t.idempotent(req) {
		return nil, err
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return nil, err
	}
	if !t.budget.allow(requests, time.Now()) {
		t.budgetExhausted.Add(1)
		c.denied()
		return nil, err
	}
	body := req.Body
	if req.GetBody != nil {
		b, gerr := req.GetBody()
		if gerr != nil {
			return nil, err
		}
		body = b
	}
	t.retries.Add(1)
	return body, nil
}

// idempotent reports whether a written request may be retried.
func (t *Transport) idempotent(req *http.Request) bool {
	if t.opts.WrittenRetry != RetryIdempotent {
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	if _, ok := req.Header["Idempotency-Key"]; ok {
		return true
	}
	if _, ok := req.Header["X-Idempotency-Key"]; ok {
		return true
	}
	return req.Context().Value(idempotentKey{}) != nil
}

type idempotentKey struct{}

// Outcome tells the caller of one request where it went: see WithOutcome.
type Outcome struct {
	// Addr is the host:port of the last instance tried; "" if none was.
	Addr string
	// Attempts counts the tries, the first included; 0 if none was made.
	Attempts int
}

type outcomeKey struct{}

// WithOutcome returns a context that makes a Transport record, in out, where
// a request made with it went. out must not be shared by concurrent
// requests; read it after RoundTrip returned.
func WithOutcome(ctx context.Context, out *Outcome) context.Context {
	return context.WithValue(ctx, outcomeKey{}, out)
}

// WithIdempotent marks the requests made with the returned context as
// idempotent: a Transport may retry them after they were written.
func WithIdempotent(ctx context.Context) context.Context {
	return context.WithValue(ctx, idempotentKey{}, true)
}

func (t *Transport) noInstance(lastErr error) error {
	if lastErr != nil {
		return lastErr
	}
	s := t.w.Status()
	return fmt.Errorf("%w: service %q, %d candidate instance(s), view revision %d from %q, age %v",
		ErrNoInstance, t.service, s.Instances, s.Revision, s.Source, s.Age.Round(time.Millisecond))
}

func closeBody(b io.ReadCloser) {
	if b != nil {
		b.Close()
	}
}

func hostOf(req *http.Request) string {
	if req.URL == nil {
		return ""
	}
	return req.URL.Host
}
