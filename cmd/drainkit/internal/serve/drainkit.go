package serve

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/drainkit/drainkit/grpcdrain"
	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/probes"
)

// blockingCheck is a readiness check that blocks until its context ends
// (the lifecycle's checks.timeout) while the file at path exists: a
// dependency that stopped answering.
func blockingCheck(path string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if _, err := os.Stat(path); err != nil {
			return nil
		}
		<-ctx.Done()
		return ctx.Err()
	}
}

// portOf returns the port of a TCP address.
func portOf(a net.Addr) string {
	_, port, _ := net.SplitHostPort(a.String())
	return port
}

// runDrainkit serves with the full drain sequence.
func runDrainkit(o Options, logger *slog.Logger) (int, error) {
	defer logSIGTERM(logger)()
	cfg := o.Config
	lo := cfg.LifecycleOptions()
	lo.Logger = logger
	lc, err := lifecycle.New(lo)
	if err != nil {
		return 1, err
	}
	ph, err := probes.New(lc, probes.Options{Token: string(cfg.Admin.Token), Logger: logger})
	if err != nil {
		return 1, err
	}
	defer ph.Close()
	httpLn, adminLn, err := listen(o)
	if err != nil {
		return 1, err
	}
	srv := serviceServer(serviceHandler(o, httpLn))
	lc.AddServer("http", httpdrain.New(srv, httpLn))
	if o.CheckBlockDir != "" {
		lc.AddCheck("example dependency", blockingCheck(filepath.Join(o.CheckBlockDir, portOf(httpLn.Addr()))))
	}
	if o.Warmup > 0 {
		// The example's caches: readiness fails (STARTING) until they are
		// warm, the drill's warmup scenario checks that no request comes
		// before.
		lc.OnWarmup("example caches", func(ctx context.Context) error { return syncx.Sleep(ctx, o.Warmup) })
	}

	grpcLn, err := listenGRPC(o)
	if err != nil {
		_ = httpLn.Close()
		_ = adminLn.Close()
		return 1, err
	}
	if grpcLn != nil {
		// The gRPC listener drains with the HTTP one: health NOT_SERVING and
		// GOAWAY at t0, the listener open through the propagation window,
		// streams ended at the drain signal.
		grpcdrain.Add(lc, "grpc", grpcLn, registerGRPC(grpcdrain.Draining))
	}

	// An operator's offline in Nacos ejects the instance (cause operator,
	// /state shows it) until an operator puts it online again.
	onOperator := func(offline bool) {
		if offline {
			_ = lc.Eject("nacos: an operator disabled the instance (offline)")
		} else {
			_ = lc.Restore("nacos: an operator enabled the instance")
		}
	}
	reg, regName, err := newRegistrar(o, httpLn, grpcLn, logger, onOperator)
	if err != nil {
		_ = httpLn.Close()
		_ = adminLn.Close()
		if grpcLn != nil {
			_ = grpcLn.Close()
		}
		return 1, err
	}
	if reg != nil {
		defer reg.Close()
		lc.AddRegistrar(regName, reg)
	}

	admin := &http.Server{Handler: ph, ReadHeaderTimeout: 10 * time.Second}
	adminDone := make(chan error, 1)
	go func() { adminDone <- admin.Serve(adminLn) }()

	runErr := lc.Run(context.Background())

	// The admin listener served the probes through the whole drain; close it
	// last.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = admin.Shutdown(ctx)
	if err := <-adminDone; err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Warn("admin listener failed", "error", err.Error())
	}
	return lifecycle.ExitCode(runErr), nil
}
