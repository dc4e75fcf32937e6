package consumer

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/drainkit/drainkit/registry"
)

// ErrWrongService is wrapped by the error of an attempt answered by an
// instance of another service than the one called (see
// registry.IdentityHeader).
var ErrWrongService = errors.New("consumer: the address answered as another service")

// identityError is an attempt whose answer named another service: a
// connect-level failure of that address (its answer is never returned).
type identityError struct {
	addr, want, got string
}

func (e *identityError) Error() string {
	return fmt.Sprintf("%v: %s answered as %q, want an instance of %q (an address reused by another service?)",
		ErrWrongService, e.addr, e.got, e.want)
}

func (e *identityError) Unwrap() error { return ErrWrongService }

// checkIdentity checks the identity a drainkit provider sends on every
// response (registry.IdentityHeader, "<service>/<id>") against the service
// this Transport calls. A response without it passes (a provider not built
// on drainkit). On a mismatch the response is discarded and ep's idle
// connections closed, so that no later request reuses a connection to the
// wrong service; the caller ejects ep (a connect-level failure) and sends
// the request again only if it is idempotent: the other service may have
// run it.
func (t *Transport) checkIdentity(ep *endpoint, resp *http.Response) error {
	v, ok := resp.Header[registry.IdentityHeader]
	if !ok || len(v) == 0 {
		return nil
	}
	svc, _, _ := strings.Cut(v[0], "/")
	if svc == t.registryService {
		return nil
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	ep.tr.CloseIdleConnections()
	t.mismatches.Add(1)
	return &identityError{addr: ep.addr, want: t.registryService, got: v[0]}
}

// misidentified reports whether err is an answer from another service.
func misidentified(err error) bool {
	var ie *identityError
	return errors.As(err, &ie)
}
