package main

import (
	"fmt"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/telemetry"
)

// telemetryOptions wires telemetry: an observer of the lifecycle, which
// flushes itself as the last stop hook, and GET /metrics on the admin
// listener when admin.metrics is set (through the OpenTelemetry Prometheus
// exporter; else the global providers, no-op unless a program sets them).
func telemetryOptions(cfg *config.Config) ([]drainkit.Option, error) {
	var prom *telemetry.Prometheus
	telOpts := telemetry.Options{}
	if cfg.Admin.Metrics {
		var err error
		if prom, err = telemetry.NewPrometheus(); err != nil {
			return nil, fmt.Errorf("admin.metrics: %w", err)
		}
		telOpts.MeterProvider = prom.MeterProvider()
	}
	tel, err := telemetry.New(telOpts)
	if err != nil {
		return nil, err
	}
	opts := []drainkit.Option{drainkit.WithObserver(tel)}
	if prom != nil {
		opts = append(opts, drainkit.WithAdminHandler("/metrics", prom.Handler()))
	}
	return opts, nil
}
