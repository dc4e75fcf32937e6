package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/telemetry"
)

// telemetryOptions wires telemetry once: an observer of the lifecycle, GET
// /metrics on the admin listener when admin.metrics is set (through the
// OpenTelemetry Prometheus exporter; else the global providers, no-op unless
// a program sets them), and a flush after the drain, when the drain span is
// complete.
func telemetryOptions(cfg *config.Config, logger *slog.Logger) ([]drainkit.Option, error) {
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
	opts := []drainkit.Option{
		drainkit.WithObserver(tel),
		drainkit.AfterRun(func(ctx context.Context) error {
			if err := tel.Flush(ctx); err != nil {
				logger.Warn("telemetry flush failed", "error", err)
			}
			return tel.Close()
		}),
	}
	if prom != nil {
		opts = append(opts, drainkit.WithAdminHandler("/metrics", prom.Handler()), drainkit.AfterRun(prom.Shutdown))
	}
	return opts, nil
}
