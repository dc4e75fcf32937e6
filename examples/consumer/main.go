// Command consumer is an example service that calls examples/httpservice
// through package consumer: it discovers the instances in etcd with --etcd
// (kratos's key layout, as kratos services and examples/httpservice with
// ETCD_ENDPOINTS register), in Consul when CONSUL_HTTP_ADDR is set, else
// takes them from --targets, and forwards every GET it receives to one of
// them (round robin, failover on refused dials, retries of idempotent
// requests within the retry budget, outlier ejection, an empty-list hold).
//
//	consumer [--http-addr 127.0.0.1:8090] [--admin-addr 127.0.0.1:8091]
//	         [--service httpservice] [--targets 127.0.0.1:8080,127.0.0.1:8082]
//	         [--etcd 127.0.0.1:2379,... [--etcd-prefix /microservices]]
//	         [--snapshot /var/lib/consumer/httpservice.json] [--max-staleness 1m]
//	         [--zone a [--zone-min-size 6] [--zone-strict]]
//
// With --snapshot, the last good list is kept in that file and served at
// start while the registry does not answer (never when older than
// --max-staleness; GET /status then reports "snapshot" and the view's age).
//
// With --zone, calls prefer the instances of that zone (registry metadata
// "zone"; with --targets, host:port@zone) and spill to the others while
// fewer than 70 % of the zone's instances are healthy (consumer.Zones), or
// with --zone-strict never leave it. Every forwarded answer carries the
// header Drainkit-Upstream, the host:port of the instance that gave it.
//
// The three discoveries exclude each other: --etcd, CONSUL_HTTP_ADDR and
// --targets given together are a usage error naming both, never a silent
// choice of one.
//
// GET /<path> on --http-addr is sent as GET http://<service>/<path>, and the
// answer relayed; GET /status on --admin-addr returns the consumer's Status
// as JSON. Logs are JSON lines on stderr; the first says "started" with the
// bound addresses and, as "from", where the instances are read (for etcd,
// the key prefix <--etcd-prefix>/<service>/ and the endpoints: compare it
// with the key in httpservice's "etcd: registered" line when no instance is
// found); every "forward failed" line repeats "from". SIGTERM or SIGINT
// stops it (exit 0); bad flags exit 2.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/etcd"
)

func main() { os.Exit(run(os.Args[1:])) }

type flags struct {
	httpAddr, adminAddr, service, targets string
	etcd, etcdPrefix, snapshot, zone      string
	timeout, maxStaleness                 time.Duration
	zoneMinSize                           int
	zoneStrict                            bool
}

func parse(args []string) (flags, error) {
	var f flags
	fs := pflag.NewFlagSet("consumer", pflag.ContinueOnError)
	fs.StringVar(&f.httpAddr, "http-addr", "127.0.0.1:8090", "address of the forwarding listener")
	fs.StringVar(&f.adminAddr, "admin-addr", "127.0.0.1:8091", "address of the status listener (GET /status)")
	fs.StringVar(&f.service, "service", "httpservice", "name of the service to call (the Consul or etcd service name with CONSUL_HTTP_ADDR or --etcd)")
	fs.StringVar(&f.targets, "targets", "", "comma-separated host:port list of the service's instances, each optionally with @zone; not with --etcd or CONSUL_HTTP_ADDR")
	fs.StringVar(&f.zone, "zone", "", "this consumer's zone: prefer the instances whose registry metadata \"zone\" (or @zone in --targets) names it; empty: no zone-aware picking")
	fs.IntVar(&f.zoneMinSize, "zone-min-size", 0, "with --zone: the fewest instances for zone-aware picking (0: consumer's default, 6)")
	fs.BoolVar(&f.zoneStrict, "zone-strict", false, "with --zone: never call another zone (fail instead)")
	fs.StringVar(&f.etcd, "etcd", "", "comma-separated etcd client addresses (as registry.etcd.endpoints): discover the service in etcd; not with --targets or CONSUL_HTTP_ADDR")
	fs.StringVar(&f.etcdPrefix, "etcd-prefix", etcd.DefaultPrefix, "with --etcd: the key prefix (as registry.etcd.prefix); instances are read from <prefix>/<service>/")
	fs.StringVar(&f.snapshot, "snapshot", "", "file keeping the last good list of instances, served at start while the registry does not answer (consumer.WatcherOptions.SnapshotPath); empty: none")
	fs.DurationVar(&f.maxStaleness, "max-staleness", consumer.DefaultMaxStaleness, "how long the registry may fail before the view is degraded; a snapshot older than this is never served")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Second, "timeout of one forwarded request, retries included")
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fs.SetOutput(os.Stderr)
			fs.PrintDefaults()
		}
		return f, err
	}
	if f.timeout <= 0 {
		return f, fmt.Errorf("--timeout %v: want > 0", f.timeout)
	}
	if f.maxStaleness <= 0 {
		return f, fmt.Errorf("--max-staleness %v: want > 0", f.maxStaleness)
	}
	if (fs.Changed("zone-min-size") || f.zoneStrict) && f.zone == "" {
		return f, errors.New("--zone-min-size, --zone-strict: only with --zone")
	}
	if fs.Changed("etcd-prefix") && f.etcd == "" {
		return f, errors.New("--etcd-prefix: only with --etcd")
	}
	if f.etcdPrefix == "" { // registry/etcd would take its default, unlike the start line's "from"
		return f, fmt.Errorf("--etcd-prefix: empty; omit it for the default %s", etcd.DefaultPrefix)
	}
	return f, nil
}

// run returns the exit code, so that deferred cleanup runs before os.Exit.
func run(args []string) int {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	f, err := parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		return 0
	}
	if err != nil {
		return usageError(err)
	}
	src, kind, closeSource, err := source(f)
	if err != nil {
		return usageError(err)
	}
	defer closeSource()
	w, err := consumer.NewWatcher(consumer.WatcherOptions{Source: src, Service: f.service, Logger: logger,
		SnapshotPath: f.snapshot, MaxStaleness: f.maxStaleness})
	if err != nil {
		return usageError(err)
	}
	defer w.Close()
	tr, err := consumer.NewTransport(w, f.service, consumer.Options{Logger: logger,
		Zones: consumer.Zones{Local: f.zone, MinClusterSize: f.zoneMinSize, Strict: f.zoneStrict}})
	if err != nil {
		return usageError(err)
	}
	defer tr.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return serve(ctx, f, kind, tr, logger)
}

// source is the service's discovery: etcd with --etcd, Consul when
// CONSUL_HTTP_ADDR is set, else the --targets list. It returns the source,
// its kind for the start line, and a function that releases it (the etcd
// client; nothing for the others) to call after the Watcher is closed.
func source(f flags) (registry.Source, string, func(), error) {
	consulSet := os.Getenv("CONSUL_HTTP_ADDR") != ""
	switch {
	case f.etcd != "" && consulSet:
		return nil, "", nil, errors.New("--etcd and CONSUL_HTTP_ADDR: give one discovery (unset CONSUL_HTTP_ADDR to use etcd)")
	case f.etcd != "" && f.targets != "":
		return nil, "", nil, errors.New("--etcd and --targets: give one discovery, not both")
	case consulSet && f.targets != "":
		return nil, "", nil, errors.New("--targets and CONSUL_HTTP_ADDR: give one discovery (unset CONSUL_HTTP_ADDR to use --targets)")
	case f.etcd != "":
		src, closeClient, err := etcdSource(f)
		return src, etcd.SourceName, closeClient, err
	case consulSet:
		src, err := consulSource(f.service)
		return src, "consul", func() {}, err
	case f.targets == "":
		return nil, "", nil, errors.New("--targets: empty, and neither --etcd nor CONSUL_HTTP_ADDR is set: give the service's host:port list")
	}
	src, err := targets(f.service, f.targets)
	if err != nil {
		return nil, "", nil, fmt.Errorf("--targets: %w", err)
	}
	return src, "static", func() {}, nil
}

// targets is the static source of a --targets list: host:port entries,
// each optionally with @zone (its metadata "zone").
func targets(service, list string) (registry.Source, error) {
	var ins []registry.Instance
	for _, t := range strings.Split(list, ",") {
		addr, zone, _ := strings.Cut(strings.TrimSpace(t), "@")
		if _, err := consumer.Static(service, addr); err != nil { // its checks of the address
			return nil, err
		}
		host, port, _ := net.SplitHostPort(addr)
		p, _ := strconv.Atoi(port)
		in := registry.Instance{ID: addr, Address: host, Port: p}
		if zone != "" {
			in.Meta = map[string]string{"zone": zone}
		}
		ins = append(ins, in)
	}
	return consumer.StaticInstances(service, ins), nil
}

// serve runs the two listeners until ctx ends, then shuts them down.
func serve(ctx context.Context, f flags, kind string, tr *consumer.Transport, logger *slog.Logger) int {
	ln, err := net.Listen("tcp", f.httpAddr)
	if err != nil {
		return usageError(fmt.Errorf("--http-addr: %w", err))
	}
	aln, err := net.Listen("tcp", f.adminAddr)
	if err != nil {
		ln.Close()
		return usageError(fmt.Errorf("--admin-addr: %w", err))
	}
	client := &http.Client{Transport: tr, Timeout: f.timeout}
	from := watched(f, kind)
	srv := &http.Server{Handler: forward(client, f.service, logger.With("from", from)), ReadHeaderTimeout: 5 * time.Second}
	admin := &http.Server{Handler: status(tr), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	go admin.Serve(aln)
	logger.Info("started", "http", ln.Addr().String(), "admin", aln.Addr().String(), "service", f.service, "discovery", kind, "from", from)
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = errors.Join(srv.Shutdown(sctx), admin.Shutdown(sctx))
	logger.Info("stopped", "status", tr.Status().String(), "err", err)
	if err != nil {
		return 1
	}
	return 0
}

// watched says where the instances come from, for the start line and the
// failure logs: with a wrong --etcd-prefix or --service the consumer starts
// and finds no instance, and only the keys it reads tell why.
func watched(f flags, kind string) string {
	switch kind {
	case etcd.SourceName:
		return fmt.Sprintf("etcd keys %s/%s/ at %s", f.etcdPrefix, f.service, f.etcd)
	case "consul":
		return fmt.Sprintf("Consul service %s at CONSUL_HTTP_ADDR=%s", f.service, os.Getenv("CONSUL_HTTP_ADDR"))
	}
	return "--targets " + f.targets
}

// forward sends each GET on to the service and relays the answer.
func forward(client *http.Client, service string, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "only GET is forwarded", http.StatusMethodNotAllowed)
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, "http://"+service+r.URL.RequestURI(), nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var out consumer.Outcome
		resp, err := client.Do(req.WithContext(consumer.WithOutcome(req.Context(), &out)))
		if err != nil {
			logger.Warn("forward failed", "path", r.URL.Path, "err", err)
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.Header().Set("Drainkit-Upstream", out.Addr)
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	})
}

// status serves GET /status: the consumer's Status and instances as JSON.
func status(tr *consumer.Transport) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(struct {
			consumer.Status
			Err       string                    `json:"err,omitempty"`
			Instances []consumer.InstanceStatus `json:"candidates"`
		}{tr.Status(), errString(tr.Status().Err), tr.Instances()})
	})
	return mux
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func usageError(err error) int {
	fmt.Fprintln(os.Stderr, "consumer:", err)
	return 2
}
