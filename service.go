package drainkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/probes"
	"github.com/drainkit/drainkit/registry"
)

// service is what the options build and run executes.
type service struct {
	name          string
	out           io.Writer // errors, warnings and the default logger's lines
	stdout        io.Writer // what was asked for: --help and --version
	env           []string
	logger        *slog.Logger
	listeners     []listenerSpec
	schemes       [][2]string // WithEndpointScheme: listener name, scheme
	registrations []namedRegistration
	lcSetup       []func(*lifecycle.Lifecycle)
	lcHooks       []func(*lifecycle.Lifecycle) error
	observers     []lifecycle.Observer
	adminHandlers []adminHandler
	setups        []func(*config.Config) ([]Option, error)
	onStarted     []func(map[string]net.Addr)
	defineFlags   []func(*pflag.FlagSet)
	defaultAdmin  string
	adminLimits   AdminLimits
	identity      registry.Status // the first registrar's service and ID; zero if none (set in wire)
}

type namedRegistration struct {
	name string
	r    Registration
}

// errDone is returned by prepare after --help or --version: exit 0.
var errDone = errors.New("done")

// run is Run's body: prepare (no side effects but output), start, serve.
func (s *service) run(ctx context.Context, args []string) int {
	if len(args) > 0 && args[0] == PrestopCommand {
		return s.runPrestop(ctx, args[1:])
	}
	cfg, addrs, err := s.prepare(args)
	if errors.Is(err, errDone) {
		return 0
	}
	if err != nil {
		// The variable a typo left unread may be what the error is about
		// (a default out of range of a value that was set).
		for _, w := range config.CheckEnv(s.env) {
			fmt.Fprintf(s.out, "%s: warning: %s\n", s.name, w)
		}
		fmt.Fprintf(s.out, "%s: %v\n", s.name, err)
		return 2
	}
	for _, w := range cfg.Warnings() { // before any listener opens
		attrs := []any{"env", w.Var}
		if w.Suggestion != "" {
			attrs = append(attrs, "did_you_mean", w.Suggestion)
		}
		s.logger.Warn(w.String(), attrs...)
	}
	return s.start(ctx, cfg, addrs)
}

// prepare parses the flags, loads and checks every setting and registrar,
// and applies the setup hooks. Nothing is opened.
func (s *service) prepare(args []string) (*config.Config, map[string]string, error) {
	fs, addrFlags, err := s.parseFlags(args)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := config.Load(config.Sources{Flags: fs, Env: s.env})
	if err != nil {
		return nil, nil, err
	}
	if s.defaultAdmin != "" && cfg.Source("admin.addr").Kind == config.FromDefault {
		cfg.Admin.Addr = s.defaultAdmin
	}
	for i := 0; i < len(s.setups); i++ { // setups may add setups
		more, err := s.setups[i](cfg)
		if err != nil {
			return nil, nil, err
		}
		for _, o := range more {
			o(s)
		}
	}
	if s.logger == nil {
		s.logger = slog.New(slog.NewJSONHandler(s.out, nil))
	}
	if err := s.checkMetrics(cfg); err != nil {
		return nil, nil, err
	}
	if _, err := s.adminMux(http.NotFoundHandler()); err != nil { // the real probes come in start
		return nil, nil, err
	}
	if err := s.applySchemes(); err != nil {
		return nil, nil, err
	}
	addrs, err := s.listenAddrs(cfg, addrFlags)
	if err != nil {
		return nil, nil, err
	}
	if err := s.checkRegistrySettings(cfg); err != nil {
		return nil, nil, err
	}
	registers := false
	for _, r := range s.registrations {
		if r.r.Check != nil {
			if err := r.r.Check(cfg); err != nil {
				return nil, nil, fmt.Errorf("registrar %s: %w", r.name, err)
			}
		}
		registers = registers || r.r.Enabled == nil || r.r.Enabled(cfg)
	}
	if registers {
		if err := s.checkSchemes(); err != nil {
			return nil, nil, err
		}
		if err := cfg.CheckDeregisterBudget(); err != nil {
			return nil, nil, err
		}
	}
	return cfg, addrs, nil
}

// checkMetrics fails loudly when admin.metrics is on but nothing serves
// /metrics: the root package links no metrics exporter of its own.
func (s *service) checkMetrics(cfg *config.Config) error {
	if !cfg.Admin.Metrics {
		return nil
	}
	for _, h := range s.adminHandlers {
		if h.pattern == "/metrics" || h.pattern == "GET /metrics" {
			return nil
		}
	}
	return fmt.Errorf("admin.metrics: true (from %s) but this program mounts no /metrics handler: "+
		"add drainkit.WithAdminHandler(\"/metrics\", ...) (e.g. the Handler of a telemetry.NewPrometheus), or unset it", cfg.Source("admin.metrics"))
}

// start builds the lifecycle, opens the listeners and runs until drained.
func (s *service) start(ctx context.Context, cfg *config.Config, addrs map[string]string) int {
	lo := cfg.LifecycleOptions()
	lo.Logger, lo.Observers = s.logger, s.observers
	lc, err := lifecycle.New(lo)
	if err != nil {
		return s.fail(err)
	}
	ph, err := probes.New(lc, probes.Options{Token: string(cfg.Admin.Token), Logger: s.logger,
		ServingzFailsDraining: !cfg.Admin.ServingzDraining})
	if err != nil {
		return s.fail(err)
	}
	defer ph.Close()
	ah, err := s.adminMux(ph) // checked in prepare already
	if err != nil {
		return s.fail(err)
	}
	lns, err := s.listen(cfg.Admin.Addr, cfg.Source("admin.addr"), addrs)
	if err != nil {
		return s.fail(err)
	}
	defer closeAll(lns) // Serve never runs if the drain starts during warm-up
	admin := newAdminServer(lns[adminName], ah, s.adminLimits, s.logger)
	go admin.serve(s.logger)
	defer admin.shutdown() // it served through the whole drain
	if err := s.wire(lc, cfg, lns); err != nil {
		return s.fail(err)
	}
	return s.exitCode(lc.Run(ctx))
}

// exitCode maps Run's result to the exit code and logs a failure: Run's own
// exit line covers a drain, but not every error (a budget Run rejected at
// its start), and no exit but 0 may be silent.
func (s *service) exitCode(err error) int {
	code := lifecycle.ExitCode(err)
	if err != nil {
		s.logger.Error("drainkit: exit", "exit_code", code, "error", err.Error())
	}
	return code
}

// wire adds the servers, registrars, hooks and checks to lc.
func (s *service) wire(lc *lifecycle.Lifecycle, cfg *config.Config, lns map[string]net.Listener) error {
	bound := map[string]net.Addr{}
	for name, ln := range lns {
		bound[name] = ln.Addr()
	}
	lc.OnWarmup("started", func(context.Context) error { s.logStart(lc, bound); return nil })
	// Registrars first: the HTTP listeners name the instance they register
	// (httpdrain.WithIdentity).
	var closers []io.Closer
	closeRegistrars := func() { // registrars built, never to run
		for _, c := range closers {
			c.Close()
		}
	}
	b := Bound{Addrs: bound, Endpoints: s.endpoints(bound), Logger: s.logger}
	for _, r := range s.registrations {
		if r.r.Build == nil { // claims settings, registers nowhere
			continue
		}
		reg, err := r.r.Build(cfg, b)
		if err != nil {
			closeRegistrars()
			return fmt.Errorf("registrar %s: %w", r.name, err)
		}
		if reg != nil {
			lc.AddRegistrar(r.name, reg)
			if c, ok := reg.(io.Closer); ok { // after the drain's deregistration
				lc.OnStop(r.name, func(context.Context) error { return c.Close() })
				closers = append(closers, c)
			}
			if st, ok := reg.(interface{ Status() registry.Status }); ok && s.identity.Service == "" {
				s.identity = st.Status()
			}
		}
	}
	for _, l := range s.listeners {
		srv, err := l.build(lc, lns[l.name])
		if err != nil {
			closeRegistrars()
			return fmt.Errorf("listener %s: %w", l.name, err)
		}
		lc.AddServer(l.name, srv)
	}
	for _, f := range s.lcSetup {
		f(lc)
	}
	for _, f := range s.lcHooks {
		if err := f(lc); err != nil {
			return err
		}
	}
	return nil
}

// fail logs err after something was started and returns exit code 2.
func (s *service) fail(err error) int {
	fmt.Fprintf(s.out, "%s: %v\n", s.name, err)
	return 2
}

// logStart logs the start line: PID, version, every listener's address, and
// the registrars by name ("none" when the instance registers nowhere, e.g.
// because the registry's address is unset or misspelt).
func (s *service) logStart(lc *lifecycle.Lifecycle, bound map[string]net.Addr) {
	attrs := []any{"pid", os.Getpid(), "version", mainVersion(), "drainkit_version", Version()}
	attrs = append(attrs, "admin", bound[adminName].String())
	for _, l := range s.listeners {
		attrs = append(attrs, l.name, bound[l.name].String())
	}
	var registries []string
	for _, r := range lc.Status().Registry {
		registries = append(registries, r.Name)
	}
	if len(registries) == 0 {
		registries = []string{"none"}
	}
	s.logger.Info("started", append(attrs, "registries", strings.Join(registries, ","))...)
	for _, fn := range s.onStarted {
		fn(bound)
	}
}

// httpServer is the ServerFunc of WithHTTPServer: its responses name the
// instance the program registers, if any (httpdrain.WithIdentity).
func (s *service) httpServer(srv *http.Server) ServerFunc {
	return func(lc *lifecycle.Lifecycle, ln net.Listener) (lifecycle.Server, error) {
		return httpdrain.New(srv, ln, httpdrain.WithIdentity(s.identity.Service, s.identity.ID)), nil
	}
}
