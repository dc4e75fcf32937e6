// Package data is the layout's data layer: NewData opens the resources the
// services use and returns the cleanup that closes them, which wire hands
// back from wireApp.
package data

import (
	"github.com/go-kratos/kratos/v2/log"

	"github.com/drainkit/drainkit/examples/frameworks/kratoslayout/internal/conf"
)

// Data holds the data layer's resources (none in this example).
type Data struct{}

// NewData returns the data layer and its cleanup, which logs "closing the
// data resources" as the layout's does.
func NewData(c *conf.Data, logger log.Logger) (*Data, func(), error) {
	cleanup := func() {
		log.NewHelper(logger).Info("closing the data resources")
	}
	return &Data{}, cleanup, nil
}
