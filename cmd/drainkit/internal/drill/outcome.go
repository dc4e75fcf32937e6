package drill

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// Outcome is how one request of the load ended, from the consumer's side.
type Outcome uint8

// Outcomes, in the order the report lists them. Every outcome but OK is a
// failure.
const (
	OK         Outcome = iota // a 2xx-4xx response, body read to the end
	Refused                   // connect: ECONNREFUSED (nothing listens)
	Reset                     // ECONNRESET or EPIPE: the peer cut the connection
	EOF                       // io.EOF / io.ErrUnexpectedEOF: closed before a full response
	Timeout                   // the request's deadline passed
	Status5xx                 // a response with a 5xx status
	NoEndpoint                // the consumer's view of the service was empty
	Other                     // any other error
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"ok", "refused", "reset", "eof", "timeout", "5xx", "no_endpoint", "other"}

// String returns the outcome's name as used in the table and JSON, e.g. "refused".
func (o Outcome) String() string {
	if o >= numOutcomes {
		return "unknown"
	}
	return outcomeNames[o]
}

// Failed reports whether o counts as a failed request.
func (o Outcome) Failed() bool { return o != OK }

// Classify maps a request's result to an Outcome. status is the response's
// status code (0 if there was no response) and err the error from the client
// or from reading the body. The checks go from the most to the least
// specific, so a refused connect that is wrapped in a *url.Error and an
// *net.OpError is still Refused.
func Classify(status int, err error) Outcome {
	if err == nil {
		if status >= 500 {
			return Status5xx
		}
		return OK
	}
	switch {
	case errors.Is(err, ErrNoEndpoint):
		return NoEndpoint
	case errors.Is(err, syscall.ECONNREFUSED):
		return Refused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return Reset
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return Timeout
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return EOF
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return Timeout
	}
	return Other
}
