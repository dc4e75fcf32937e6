package drill

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drainkit/drainkit/lifecycle/budget"
)

// Built-in strategies. Each runs the same example handlers
// (examples/httpservice/app) in `drainkit serve --strategy NAME`.
const (
	// StrategyDrainkit is the full drainkit sequence: lifecycle, httpdrain and
	// probes (readiness 503 at once, propagation window, Connection: close,
	// listener close, in-flight wait).
	StrategyDrainkit = "drainkit"
	// StrategyShutdown is what most Go services do: on SIGTERM call
	// http.Server.Shutdown at once; readiness stays 200 until then.
	StrategyShutdown = "shutdown"
	// StrategyExit has no drain at all: SIGTERM's default action kills the
	// process.
	StrategyExit = "exit"
	// StrategyKill is the same process as exit, stopped with SIGKILL: a
	// `kill -9`, a lost node, an OOM kill. Nothing drains; only the
	// consumers can save the requests.
	StrategyKill = "kill"
	// StrategyOfflineKill is the first incident behind drainkit, with
	// Nacos (Config.Nacos): the operator marks the old replica offline in
	// the Nacos console (through the server's open API, as the console
	// does), waits Config.OfflineWait, then kill -9s it. The process is the
	// same as exit's, registered in Nacos. Whether requests are lost
	// depends only on the consumers: how soon they learn of the offline,
	// and whether they resend what a dead address refused.
	StrategyOfflineKill = "offline-kill"
	// StrategySleep is the baseline most teams deploy instead of a drain:
	// `preStop: sleep 10` with the pod not ready. At SIGTERM readiness
	// fails and the instance deregisters, serves on for 10 s, then
	// calls http.Server.Shutdown.
	StrategySleep = "sleep10"
)

// Strategies lists the built-in strategies in the order the drill runs and
// reports them.
var Strategies = []string{StrategyDrainkit, StrategyShutdown, StrategySleep, StrategyExit, StrategyKill, StrategyOfflineKill}

// DefaultStrategies are the strategies a drill compares unless told
// otherwise.
var DefaultStrategies = []string{StrategyDrainkit, StrategyShutdown, StrategyExit}

// Methods are the request methods the load can send (Config.Method).
var Methods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// bodyMethods are the Methods that carry a body (Config.Body).
var bodyMethods = []string{"POST", "PUT", "PATCH", "DELETE"}

// postBody is the body of every POST, PUT and PATCH the load sends when
// Config.Body is empty.
var postBody = []byte(`{"drill":"a small request body"}`)

// MaxPathLen and MaxBodyLen bound Config.Path and Config.Body.
const (
	MaxPathLen = 2048
	MaxBodyLen = 1 << 20
)

// Config is one drill. Use DefaultConfig and change what differs.
type Config struct {
	// Scenarios are the faults to rehearse, one after another (see
	// Scenarios); empty means DefaultScenarios, the rolling restart.
	Scenarios []string
	// Warmup is how long the built-in strategies' example service warms up
	// in ScenarioWarmup (default 3s; above 0 and below warmup.timeout).
	Warmup time.Duration
	// Outage is how long the registry is unreachable in
	// ScenarioRegistryOutage (default 3s, up to 10m).
	Outage time.Duration
	// ZonePolicy is what the drainkit consumer does in ScenarioZoneLoss
	// when its zone is lost: ZoneSpill (default) or ZoneStrict.
	ZonePolicy string
	// Strategies to compare (default DefaultStrategies). Ignored with Exec.
	Strategies []string
	// ConsumerKind is the consumers' kind: ConsumerNaive (default) or
	// ConsumerDrainkit (see RegisterConsumer).
	ConsumerKind string
	// Protocol is what the load speaks: ProtocolHTTP (default),
	// ProtocolGRPC or ProtocolGRPCStream (see protocol.go); StreamHold is
	// how long each request of ProtocolGRPCStream holds its stream
	// (default 1s, below RequestTimeout).
	Protocol   string
	StreamHold time.Duration
	// Method is the load's request method, one of Methods (default "GET");
	// a POST, PUT or PATCH carries Body, else a small JSON body. A consumer
	// may not resend a POST or PATCH once it was written.
	Method string
	// Path is the request target: a path with an optional query, starting
	// with '/' (default "/"; at most MaxPathLen bytes), so that a drill can
	// exercise an endpoint of the service's own.
	Path string
	// Body is the request body for a method of bodyMethods (at most
	// MaxBodyLen bytes; "" means the small default body for POST, PUT and
	// PATCH and none for DELETE).
	Body string
	// Self is the drainkit binary re-executed as `Self serve --strategy X`
	// for the built-in strategies (os.Executable()).
	Self string
	// Exec, if set, drills this binary instead of the built-in strategies; it
	// must accept --http-addr and --admin-addr and read DRAINKIT_* variables.
	// ExecArgs go before those flags.
	Exec     string
	ExecArgs []string
	// Replicas is how many instances run at once (default 3, 1..20).
	Replicas int
	// Rate is the total request rate of all consumers, requests/s (default
	// 300, 1..5000). Consumers is how many consumers share it (default 4).
	Rate      float64
	Consumers int
	// RequestTimeout bounds each request (default 2s).
	RequestTimeout time.Duration
	// DiscoveryInterval is how often each replica's /readyz is polled
	// (default 1s); FailureThreshold how many failures in a row drop it
	// (default 2).
	DiscoveryInterval time.Duration
	FailureThreshold  int
	// ConsumerCache, if > 0, makes each consumer keep a fetched instance list
	// this long (Spring Cloud LoadBalancer's cache is 35s).
	ConsumerCache time.Duration
	// Consul, if set, is the Consul agent's HTTP address: replicas register
	// there and consumers learn the instances through a watch.
	Consul string
	// Etcd, if set, is an etcd client address (host:port): replicas register
	// there under a lease (kratos's key layout) and consumers learn the
	// instances through a watch. At most one of Consul, Etcd and Nacos.
	Etcd string
	// Nacos, if set, is a Nacos server's HTTP address (host:port; its gRPC
	// port is port+1000): replicas register there as ephemeral instances
	// (registry/nacos), drainkit consumers follow registry/nacos's Source,
	// and naive consumers poll the healthy list of the open API every
	// NacosPoll, as a Nacos 1.x client does.
	Nacos string
	// SpringJar is the jar of ConsumerSpring's JVM (tools/springconsumer,
	// which scripts/spring.sh builds; `drainkit drill` takes it from
	// EnvSpringJar); only ConsumerSpring needs it.
	SpringJar string
	// NacosPoll is how often, with Nacos, the naive consumers poll the
	// open API (default 5s, 100ms..10m).
	NacosPoll time.Duration
	// NacosUsername and NacosPassword are the Nacos login (registry.nacos.
	// username and password, from the drill's environment, which the
	// replicas inherit) of the drill's operator and consumers: Nacos 3 by
	// default opens its admin API, the console's offline, to admins only.
	// Empty: no login. The password is never shown.
	NacosUsername, NacosPassword string
	// OfflineWait is how long StrategyOfflineKill's operator waits between
	// the console's offline and kill -9 (default 500ms, 0..1m).
	OfflineWait time.Duration
	// Service is, with Exec and a registry (Consul, Etcd, Nacos), the service name the binary
	// registers as (default: the binary's base name). The built-in
	// strategies register as "drainkit-drill-<strategy>-<drill pid>". The
	// replicas get it, the registry's address and (etcd) the key prefix as
	// the config package's variables and the legacy ones (registryEnv).
	Service string
	// EtcdPrefix is, with Etcd, the key prefix the replicas register under
	// and the drill watches (registry.etcd.prefix; "" means
	// etcd.DefaultPrefix, kratos's /microservices).
	EtcdPrefix string
	// Baseline is how long the load runs before the rolling restart (default
	// 2s). Tail is the least time it runs after it (default 2s); then it
	// goes on until no consumer lists a replaced replica any more, at most
	// StaleWait longer, so that the consumers' staleness is measured to its
	// end rather than cut off by the drill; and until every other strategy
	// of the drill is done too, so that all strategies are measured over the
	// same span.
	Baseline time.Duration
	Tail     time.Duration
	// PreStop makes the rolling restart stop an old replica the way the
	// kubelet does with a preStop hook running `drainkit prestop`: POST
	// /drain?wait=propagation on its admin listener, and SIGTERM when that
	// returned (or failed: a service without POST /drain answers 404).
	// Default false: SIGTERM at once.
	PreStop bool
	// Sequential runs the strategies one after another instead of at once,
	// each with the whole machine: for rates the machine cannot drive for
	// all strategies together (see Validity). Each run's offsets then count
	// from its own start, so their charts still share one axis, but each
	// run's load span is its own.
	Sequential bool
	// Wide prints the full result table (WRITTEN+UNANSWERED, EJECTIONS and
	// FAILURE KINDS as columns) instead of one that fits 120 columns, which
	// lists the failure kinds under it. Default false.
	Wide bool
	// PodSlack is how much longer than grace_period the pod's
	// terminationGracePeriodSeconds must be (the verdict's advice; `drainkit
	// check` owns the figure). 0 means 5s.
	PodSlack time.Duration
	// Checks are the replicas' readiness-check settings (checks.*); the
	// slow-probe scenario passes them as DRAINKIT_CHECKS_* and judges the
	// instance's ejection by them. Zero means budget.DefaultCheckOptions.
	Checks budget.CheckOptions
	// Timings are passed to every replica as DRAINKIT_* variables;
	// TimingSources says where each key's value came from (for the report).
	Timings       budget.Timings
	TimingSources map[string]string
	// Env is the replicas' base environment (os.Environ()).
	Env []string
}

// DefaultConfig returns the defaults: the rolling-restart scenario,
// DefaultStrategies, naive consumers
// sending GET /, 3 replicas,
// 300 requests/s from 4 consumers, readiness-probe discovery every 1 s with
// failure threshold 2, no consumer cache, 2 s of load before and after the
// rolling restart, and budget.DefaultTimings for the replicas.
func DefaultConfig() Config {
	return Config{
		Scenarios:         append([]string(nil), DefaultScenarios...),
		Warmup:            3 * time.Second,
		Outage:            3 * time.Second,
		ZonePolicy:        ZoneSpill,
		Strategies:        append([]string(nil), DefaultStrategies...),
		ConsumerKind:      ConsumerNaive,
		Protocol:          ProtocolHTTP,
		StreamHold:        time.Second,
		Method:            "GET",
		Path:              "/",
		Replicas:          3,
		Rate:              300,
		Consumers:         4,
		RequestTimeout:    2 * time.Second,
		DiscoveryInterval: time.Second,
		FailureThreshold:  2,
		Baseline:          2 * time.Second,
		Tail:              2 * time.Second,
		NacosPoll:         5 * time.Second,
		OfflineWait:       500 * time.Millisecond,
		Timings:           budget.DefaultTimings(),
	}
}

// StaleWait bounds how long the load goes on after Tail while some consumer
// still lists a replaced replica: ConsumerCache plus FailureThreshold + 2
// discovery intervals (the probes that drop it, one probe timeout and one
// interval of slack), plus with Nacos one NacosPoll (the naive consumers'
// next poll). A replica still listed after that is reported as cut short
// (StrategyRun.StillListed).
func (c Config) StaleWait() time.Duration {
	w := c.ConsumerCache + time.Duration(c.FailureThreshold+2)*c.DiscoveryInterval
	if c.Nacos != "" {
		w += c.NacosPoll
	}
	return w
}

// Validate returns an error naming the first setting out of range: the
// load and discovery settings, the request method and consumer kind, the
// binary or strategies to drill, then the replicas' timings.
func (c Config) Validate() error {
	if err := c.validateRanges(); err != nil {
		return err
	}
	if err := c.validateScenarios(); err != nil {
		return err
	}
	if err := c.validateRequest(); err != nil {
		return err
	}
	if err := c.validateProtocol(); err != nil {
		return err
	}
	if _, err := consumerKind(c.ConsumerKind); err != nil {
		return err
	}
	if err := c.validateSpring(); err != nil {
		return err
	}
	if err := c.validateTarget(); err != nil {
		return err
	}
	return c.Timings.Validate()
}

// validateRanges checks the numeric settings.
func (c Config) validateRanges() error {
	switch {
	case c.Replicas < 1 || c.Replicas > 20:
		return fmt.Errorf("--replicas: %d is out of range: must be 1..20", c.Replicas)
	case c.Rate < 1 || c.Rate > 5000:
		return fmt.Errorf("--rate: %g is out of range: must be 1..5000 requests/s", c.Rate)
	case c.Consumers < 1 || c.Consumers > 64:
		return fmt.Errorf("--consumers: %d is out of range: must be 1..64", c.Consumers)
	case c.RequestTimeout <= 0 || c.RequestTimeout > time.Minute:
		return fmt.Errorf("--request-timeout: %s is out of range: must be > 0 and <= 1m", c.RequestTimeout)
	case c.DiscoveryInterval < 10*time.Millisecond || c.DiscoveryInterval > time.Minute:
		return fmt.Errorf("--discovery-interval: %s is out of range: must be >= 10ms and <= 1m", c.DiscoveryInterval)
	case c.FailureThreshold < 1 || c.FailureThreshold > 10:
		return fmt.Errorf("--failure-threshold: %d is out of range: must be 1..10", c.FailureThreshold)
	case c.ConsumerCache < 0 || c.ConsumerCache > 10*time.Minute:
		return fmt.Errorf("--consumer-cache: %s is out of range: must be >= 0 and <= 10m", c.ConsumerCache)
	case c.Baseline < 0 || c.Baseline > 10*time.Minute:
		return fmt.Errorf("--baseline: %s is out of range: must be >= 0 and <= 10m", c.Baseline)
	case c.Tail < 0 || c.Tail > 10*time.Minute:
		return fmt.Errorf("--tail: %s is out of range: must be >= 0 and <= 10m", c.Tail)
	case c.registries() > 1:
		return fmt.Errorf("--consul, --etcd and --nacos: give at most one registry")
	case c.NacosPoll < 100*time.Millisecond || c.NacosPoll > 10*time.Minute:
		return fmt.Errorf("--nacos-poll: %s is out of range: must be >= 100ms and <= 10m", c.NacosPoll)
	case c.OfflineWait < 0 || c.OfflineWait > time.Minute:
		return fmt.Errorf("--offline-wait: %s is out of range: must be >= 0 and <= 1m", c.OfflineWait)
	}
	if c.Nacos != "" {
		host, port, err := net.SplitHostPort(c.Nacos)
		p, perr := strconv.Atoi(port)
		if err != nil || host == "" || perr != nil || p < 1 || p > 64535 {
			return fmt.Errorf("--nacos: %q must be the server's HTTP address host:port with a port from 1 to 64535 (its gRPC port is port+1000), e.g. 127.0.0.1:8848", c.Nacos)
		}
	}
	return nil
}

// registries counts the registries given (Consul, Etcd, Nacos).
func (c Config) registries() int {
	n := 0
	for _, r := range []string{c.Consul, c.Etcd, c.Nacos} {
		if r != "" {
			n++
		}
	}
	return n
}

// validateRequest checks the request the load sends: --method, --path and
// --body.
func (c Config) validateRequest() error {
	if !slices.Contains(Methods, c.Method) {
		return fmt.Errorf("--method: %q is not supported: want one of %v", c.Method, Methods)
	}
	if len(c.Path) > MaxPathLen {
		return fmt.Errorf("--path: %d bytes is too long: at most %d", len(c.Path), MaxPathLen)
	}
	if !strings.HasPrefix(c.Path, "/") || strings.HasPrefix(c.Path, "//") {
		return fmt.Errorf("--path: %q must be a path on the service starting with a single '/', e.g. /orders?limit=1", c.Path)
	}
	if i := strings.IndexFunc(c.Path, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '#' }); i >= 0 {
		return fmt.Errorf("--path: %q has a space, control character or '#' at byte %d: percent-encode it", c.Path, i)
	}
	if _, err := url.ParseRequestURI(c.Path); err != nil {
		return fmt.Errorf("--path: %q is not a valid request target: %v", c.Path, unwrapRepeat(err))
	}
	if c.Body != "" && !slices.Contains(bodyMethods, c.Method) {
		return fmt.Errorf("--body: a %s request carries no body here: use --method with one of %v", c.Method, bodyMethods)
	}
	if len(c.Body) > MaxBodyLen {
		return fmt.Errorf("--body: %d bytes is too large: at most %d (1 MiB)", len(c.Body), MaxBodyLen)
	}
	return nil
}

// validateTarget checks what is drilled: the --exec binary (before anything
// starts, naming the path, rather than after the replicas of a run could not
// start), or the strategies and the drainkit binary to re-execute.
func (c Config) validateTarget() error {
	if c.Exec != "" {
		path, err := exec.LookPath(c.Exec)
		if err != nil {
			return fmt.Errorf("--exec %q: %w", c.Exec, unwrapRepeat(err))
		}
		if info, err := os.Stat(path); err == nil && info.IsDir() {
			return fmt.Errorf("--exec %q: is a directory, want an executable", c.Exec)
		}
		return nil
	}
	if len(c.Strategies) == 0 {
		return fmt.Errorf("--strategies: empty: give one or more of %v", Strategies)
	}
	seen := map[string]bool{}
	for _, s := range c.Strategies {
		if !isBuiltin(s) {
			return fmt.Errorf("--strategies: %q is not a strategy: want one or more of %v", s, Strategies)
		}
		if seen[s] {
			return fmt.Errorf("--strategies: %q given twice", s)
		}
		if s == StrategyOfflineKill && c.Nacos == "" {
			return fmt.Errorf("--strategies: %q needs --nacos: the console's offline is a Nacos operation", s)
		}
		seen[s] = true
	}
	if c.Self == "" {
		return fmt.Errorf("drill: no drainkit binary to re-execute (Config.Self)")
	}
	return nil
}

// unwrapRepeat drops a wrapper that repeats what the flag's error already
// names: exec.Error's name, url.Error's operation and URL.
func unwrapRepeat(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func isBuiltin(s string) bool { return slices.Contains(Strategies, s) }

// request is what the load sends.
func (c Config) request() Request {
	r := Request{Method: c.Method, Path: cmp.Or(c.Path, "/")}
	switch {
	case c.Body != "":
		r.Body = []byte(c.Body)
	case c.Method == "POST" || c.Method == "PUT" || c.Method == "PATCH":
		r.Body = postBody
	}
	return r
}

// target is the request line's method and path, e.g. "GET /".
func (c Config) target() string {
	if c.grpc() {
		return c.grpcTarget()
	}
	return c.Method + " " + cmp.Or(c.Path, "/")
}

// strategyNames returns the names the run reports: the built-ins, or the
// executable's base name for Exec.
func (c Config) strategyNames() []string {
	if c.Exec != "" {
		return []string{filepath.Base(c.Exec)}
	}
	return c.Strategies
}

// gate returns the strategy whose failures decide the exit status: drainkit
// when it ran, else the executable for Exec, else "" (all of them).
func (c Config) gate() string {
	if c.Exec != "" {
		return filepath.Base(c.Exec)
	}
	for _, s := range c.Strategies {
		if s == StrategyDrainkit {
			return s
		}
	}
	return ""
}

// timingEnv returns the DRAINKIT_* variables for c.Timings. A
// propagation.min that no source set (TimingSources says "default") is
// left to the replicas' own default, so that it stays a default there
// (lifecycle.Options.MinIsDefault: a confirmed deregistration and every
// caller moved end the window before it), as in a deployment that does not
// set it.
func (c Config) timingEnv() []string {
	t := c.Timings
	minEnv := []string{"DRAINKIT_PROPAGATION_MIN=" + t.PropagationMin.String()}
	if c.TimingSources["propagation.min"] == "default" && t.PropagationMin == budget.DefaultTimings().PropagationMin {
		minEnv = nil
	}
	return append(minEnv,
		"DRAINKIT_WARMUP_TIMEOUT="+t.WarmupTimeout.String(),
		"DRAINKIT_PROPAGATION_QUIET="+t.PropagationQuiet.String(),
		"DRAINKIT_PROPAGATION_MAX="+t.PropagationMax.String(),
		"DRAINKIT_DRAIN_TIMEOUT="+t.DrainTimeout.String(),
		"DRAINKIT_STOP_TIMEOUT="+t.StopTimeout.String(),
		"DRAINKIT_GRACE_PERIOD="+t.GracePeriod.String(),
	)
}
