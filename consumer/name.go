package consumer

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/drainkit/drainkit/registry"
)

// NoName as Options.Name sends no consumer identity.
const NoName = "-"

// maxNameLen bounds Options.Name.
const maxNameLen = 128

// consumerName returns the identity Options.Name asks for ("" for none),
// or an error naming the field.
func consumerName(name string) (string, error) {
	switch name {
	case NoName:
		return "", nil
	case "":
		name = filepath.Base(os.Args[0])
		if !validName(name) {
			return "", nil // a program name that is no header value: send none
		}
		return name, nil
	}
	if !validName(name) {
		return "", fmt.Errorf("consumer: Options.Name %q: want 1 to %d bytes of visible ASCII without spaces, or %q for none", name, maxNameLen, NoName)
	}
	return name, nil
}

func validName(s string) bool {
	if s == "" || len(s) > maxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// consumerHeader is how a Transport names its consumer on each attempt
// (registry.ConsumerHeader): value is the name as a header value, shared
// by every request; alone is a request header holding nothing else, shared
// read-only by every request that brings no header of its own, so that
// those cost no allocation. Both nil when Options.Name is NoName.
type consumerHeader struct {
	value []string
	alone http.Header
}

func newConsumerHeader(name string) consumerHeader {
	if name == "" {
		return consumerHeader{}
	}
	v := []string{name}
	return consumerHeader{value: v, alone: http.Header{registry.ConsumerHeader: v}}
}

// of returns the header an attempt of a request with header h sends: h
// itself if it names its consumer already (or none is to be named), else
// a new header with h's fields and the name. h is never modified (a
// RoundTripper must not change its request); the net/http transport only
// reads the header it is given, so alone and the values are shared.
func (c consumerHeader) of(h http.Header) http.Header {
	if c.value == nil {
		return h
	}
	if len(h) == 0 {
		return c.alone
	}
	if _, ok := h[registry.ConsumerHeader]; ok {
		return h
	}
	out := make(http.Header, len(h)+1)
	for k, v := range h {
		out[k] = v
	}
	out[registry.ConsumerHeader] = c.value
	return out
}
