// Package service is the layout's service layer: the Greeter API's
// implementation, which the server providers register.
package service

import (
	"github.com/drainkit/drainkit/examples/frameworks/kratoslayout/internal/data"
	"github.com/drainkit/drainkit/examples/internal/testservice"
)

// GreeterService implements v1.GreeterServer (the examples' test service).
type GreeterService struct {
	testservice.Service
}

// NewGreeterService returns the service over the data layer d.
func NewGreeterService(d *data.Data) *GreeterService { return &GreeterService{} }
