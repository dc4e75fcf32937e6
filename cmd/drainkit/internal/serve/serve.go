// Package serve is `drainkit serve`, the hidden service mode the drill
// re-executes itself in: the example service's handlers
// (examples/httpservice/app) behind one of three shutdown strategies, so
// that the drill compares strategies on identical request handling.
//
//   - drainkit: lifecycle + httpdrain + probes, the full drain sequence
//     (DESIGN.md section 4), registering in Consul when --service is set and
//     CONSUL_HTTP_ADDR names an agent; with --grpc-addr, grpcdrain drains
//     the gRPC listener in the same sequence.
//   - shutdown: what most Go services do: readiness 200 until SIGTERM, then
//     http.Server.Shutdown (and grpc.Server.GracefulStop) at once (after
//     deregistering from Consul, if registered), no propagation window.
//   - exit: no drain at all; SIGTERM's default action kills the process.
//   - kill: the same process as exit; the drill stops it with SIGKILL (a
//     `kill -9`, a node lost, an OOM kill), so nothing can drain.
//   - offline-kill: the same process as exit, registered in Nacos; the
//     drill marks it offline in the Nacos console, then kills it with
//     SIGKILL (the first incident behind drainkit).
//
// Every strategy logs JSON to stderr; drainkit and shutdown end with one line
// carrying a "timeline" group (the lifecycle's drain timeline, or the
// shutdown strategy's own), which the drill reads.
package serve

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/drainkit/drainkit/config"
)

// Options configure one serve process.
type Options struct {
	// Strategy is "drainkit", "shutdown", "sleep10", "exit", "kill" or
	// "offline-kill".
	Strategy string
	// HTTPAddr is the service listener's address (host:port).
	HTTPAddr string
	// GRPCAddr, if set, is the gRPC listener's address (host:port): the
	// example's gRPC service (grpc.go) and the health service, drained the
	// strategy's way; registered as the instance's "grpc" endpoint beside
	// "http" (DESIGN.md section 6f). Empty: HTTP only.
	GRPCAddr string
	// Service, if set, registers the instance under this name: in etcd
	// (ETCD_ENDPOINTS), Nacos (NACOS_SERVER_ADDR) or else Consul (the agent
	// from CONSUL_HTTP_ADDR and the other CONSUL_* variables).
	Service string
	// Warmup, if > 0, is how long the example's warm-up takes: every request
	// before it is over gets 503; the drainkit strategy fails readiness
	// (STARTING) meanwhile, the others report ready at once as services
	// without a startup gate do.
	Warmup time.Duration
	// CheckBlockDir, if set, gives the drainkit strategy a readiness check
	// that blocks until its context ends (checks.timeout) while the file
	// CheckBlockDir/<HTTP port> exists: the drill's slow-probe scenario.
	CheckBlockDir string
	// Capacity, if > 0, is how many requests the service serves at once
	// (a fixed pool of workers); a request beyond it gets 503 "over
	// capacity" at once. The drill's brownout scenario sets it.
	Capacity int
	// BrownoutDir, if set, makes every service request wait BrownoutDelay
	// (or until its client gives up) while the file BrownoutDir/<HTTP port>
	// exists: the drill's brownout scenario. Readiness is not affected.
	BrownoutDir string
	// Config is the loaded configuration: timings, admin listener (its Addr
	// and Token), registry settings.
	Config *config.Config
}

// warmUntil is when the warm-up is over, zero without one.
func (o Options) warmUntil() time.Time {
	if o.Warmup <= 0 {
		return time.Time{}
	}
	return time.Now().Add(o.Warmup)
}

// Run serves until the strategy's shutdown is done and returns the process
// exit code. The exit strategy never returns after SIGTERM: the signal kills
// the process.
func Run(o Options) int {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("strategy", o.Strategy)
	var err error
	code := 1
	switch o.Strategy {
	case "drainkit":
		code, err = runDrainkit(o, logger)
	case "shutdown":
		code, err = runShutdown(o, logger)
	case "sleep10":
		code, err = runSleep(o, logger)
	case "exit", "kill", "offline-kill":
		code, err = runExit(o, logger)
	default:
		err = fmt.Errorf("--strategy: %q is not a strategy: want drainkit, shutdown, sleep10, exit, kill or offline-kill", o.Strategy)
	}
	if err != nil {
		logger.Error("serve failed", "error", err.Error())
		fmt.Fprintln(os.Stderr, "drainkit serve:", err)
		return 1
	}
	return code
}

// listen opens both listeners; it fails before anything is served.
func listen(o Options) (httpLn, adminLn net.Listener, err error) {
	httpLn, err = net.Listen("tcp", o.HTTPAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("--http-addr: %w", err)
	}
	adminLn, err = net.Listen("tcp", o.Config.Admin.Addr)
	if err != nil {
		_ = httpLn.Close()
		return nil, nil, fmt.Errorf("--admin-addr: %w", err)
	}
	return httpLn, adminLn, nil
}
