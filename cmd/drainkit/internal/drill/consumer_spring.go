package drill

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/drainkit/drainkit/registry"
)

// ConsumerSpring is a real Spring Cloud consumer (issue 32): one JVM per
// strategy run running tools/springconsumer (Spring Boot 4, Spring Cloud
// LoadBalancer with its CachingServiceInstanceListSupplier, Nacos discovery
// through spring-cloud-starter-alibaba-nacos-discovery), which learns the
// replicas from Nacos itself (Config.Nacos is required) and keeps the list
// Config.ConsumerCache (SpringCacheTTL unless set; 0 turns the cache off,
// spring.cloud.loadbalancer.cache.enabled=false). Each of the drill's
// consumers sends its requests through that JVM (GET /call/PATH on its
// loopback port); the JVM picks the instance and names the caller to the
// provider in the drainkit consumer header as "spring-<JVM pid>/c<n>", so
// that the provider's propagation window tells the consumers apart.
// Config.SpringJar is the jar (scripts/spring.sh builds it).
const ConsumerSpring = "spring"

// EnvSpringJar is the variable from which `drainkit drill` takes
// Config.SpringJar (scripts/spring.sh prints the path).
const EnvSpringJar = "DRAINKIT_SPRING_JAR"

// springPrepareTimeout bounds a JVM's start and warm-up: a Spring Boot
// start takes about 5 s of CPU, and tens of seconds on a loaded 2-core
// machine.
const springPrepareTimeout = 4 * time.Minute

// springWarmupCalls is how many requests the JVM sends through its balancer
// before the load (/prepare): enough for the JIT to compile the request
// path, so that a cold JVM does not make the load late at its start.
const springWarmupCalls = 400

// springWarmMin, springWarmMax and springWarmWorkers bound the warm-up
// (springJVM.warm).
const (
	springWarmMin     = 300
	springWarmMax     = 1500
	springWarmWorkers = 16
)

// springListedFor is how long one answer of the JVM's /listed serves every
// consumer's Listed (the event tracker samples each consumer every 10 ms).
const springListedFor = 20 * time.Millisecond

// The JVM's answer headers (tools/springconsumer's SpringConsumer).
const (
	springProviderHeader = "Drainkit-Provider"
	springErrorHeader    = "Drainkit-Spring-Error"
)

func init() { RegisterConsumer(ConsumerSpring, newSpringClient) }

// validateSpring checks what --consumer spring needs before anything
// starts: Nacos, HTTP, the rolling restart, the jar and java.
func (c Config) validateSpring() error {
	if c.ConsumerKind != ConsumerSpring {
		return nil
	}
	switch {
	case c.Nacos == "":
		return fmt.Errorf("--consumer spring: needs --nacos: the Spring Cloud consumer learns the instances from Nacos itself")
	case c.grpc():
		return fmt.Errorf("--consumer spring: --protocol %s: the Spring Cloud consumer speaks HTTP only", c.Protocol)
	case c.SpringJar == "":
		return fmt.Errorf("--consumer spring: %s is unset: set it to the consumer's jar (scripts/spring.sh builds it and prints its path)", EnvSpringJar)
	}
	for _, sc := range c.Scenarios {
		if sc != ScenarioRolling {
			return fmt.Errorf("--consumer spring: --scenario %s: the Spring Cloud consumer is drilled in the %s scenario only", sc, ScenarioRolling)
		}
	}
	if info, err := os.Stat(c.SpringJar); err != nil || info.IsDir() {
		return fmt.Errorf("--consumer spring: %s=%q: not a jar file (scripts/spring.sh builds it and prints its path)", EnvSpringJar, c.SpringJar)
	}
	if _, err := exec.LookPath("java"); err != nil {
		return fmt.Errorf("--consumer spring: java: %w (the consumer needs JDK 17 or later on PATH)", unwrapRepeat(err))
	}
	return nil
}

// springJVM is one running Spring Cloud consumer.
type springJVM struct {
	base   string // "http://127.0.0.1:<port>"
	cmd    *exec.Cmd
	done   chan struct{}
	dir    string // its log and nacos-client files
	client *http.Client

	mu       sync.Mutex // guards the /listed answer below
	listed   []string
	listedAt time.Time
}

// startSpring starts the run's JVM once its first replicas are listed,
// when the consumers are ConsumerSpring (else it returns nil, nil), and
// waits until it is warm: Nacos lists Config.Replicas instances to it and
// it sent springWarmupCalls requests through its balancer. The JVM runs in
// its own process group, its output in spring.log under a temporary
// directory that close removes unless the JVM failed.
func (s *strategyRun) startSpring(ctx context.Context) (*springJVM, error) {
	if s.cfg.ConsumerKind != ConsumerSpring {
		return nil, nil
	}
	s.st.set("starting the Spring Cloud consumer")
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "drainkit-drill-spring-"+s.name+"-")
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "spring.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	defer log.Close()
	_, port, _ := strings.Cut(addr, ":")
	args := []string{
		"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-DJM.LOG.PATH=" + filepath.Join(dir, "nacos-logs"), "-DJM.SNAPSHOT.PATH=" + dir,
		"-jar", s.cfg.SpringJar,
		"--server.port=" + port,
		"--drainkit.service=" + s.cfg.serviceName(s.name),
		"--drainkit.request-timeout=" + strconv.FormatInt(s.cfg.RequestTimeout.Milliseconds(), 10) + "ms",
		"--spring.cloud.nacos.discovery.server-addr=" + s.cfg.Nacos,
	}
	if s.cfg.ConsumerCache > 0 {
		args = append(args, "--spring.cloud.loadbalancer.cache.ttl="+strconv.FormatInt(s.cfg.ConsumerCache.Milliseconds(), 10)+"ms")
	} else {
		args = append(args, "--spring.cloud.loadbalancer.cache.enabled=false")
	}
	cmd := exec.Command("java", args...)
	cmd.Env = os.Environ()
	if s.cfg.NacosUsername != "" {
		// Through the environment (Spring's relaxed binding), not the
		// command line, which every user of the machine can read.
		cmd.Env = append(cmd.Env, "SPRING_CLOUD_NACOS_DISCOVERY_USERNAME="+s.cfg.NacosUsername,
			"SPRING_CLOUD_NACOS_DISCOVERY_PASSWORD="+s.cfg.NacosPassword)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: --consumer spring: start java: %w", s.name, err)
	}
	j := &springJVM{base: "http://" + addr, cmd: cmd, done: make(chan struct{}), dir: dir,
		client: &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 256, DisableCompression: true}}}
	go func() { _ = cmd.Wait(); close(j.done) }()
	err = j.prepare(ctx, s.cfg.Replicas, s.cfg.request().Path)
	if err == nil {
		err = j.warm(ctx, s.cfg)
	}
	if err != nil {
		j.kill()
		return nil, fmt.Errorf("%s: --consumer spring: %w (the JVM's output: %s)", s.name, err, log.Name())
	}
	return j, nil
}

// warm sends the JVM's web side concurrent requests before the load, as
// the load will (its request threads, the drill's connections to it and
// its own to the replicas): /prepare warmed the balancer from one thread
// only, and a JVM met by the load's concurrency cold stalls for seconds on
// a busy machine (requests time out before any replica is stopped: an
// INVALID drill). Three seconds' worth of the load's requests
// (springWarmMin to springWarmMax), springWarmWorkers at a time, named
// "warmup"; at least half must succeed.
func (j *springJVM) warm(ctx context.Context, cfg Config) error {
	n := min(max(int(3*cfg.Rate), springWarmMin), springWarmMax)
	r := cfg.request()
	hdr := http.Header{registry.ConsumerHeader: {"warmup"}}
	c := &springClient{jvm: j, header: hdr}
	var ok atomic.Int64
	var wg sync.WaitGroup
	next := make(chan struct{})
	for range springWarmWorkers {
		wg.Go(func() {
			for range next {
				rctx, cancel := context.WithTimeout(ctx, cfg.RequestTimeout)
				if att := c.Do(rctx, r); att.Err == nil && att.Status < 500 {
					ok.Add(1)
				}
				cancel()
			}
		})
	}
	for range n {
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if got := ok.Load(); got < int64(n/2) {
		return fmt.Errorf("warm-up: %d of %d requests through the JVM succeeded, want at least half", got, n)
	}
	return nil
}

// prepare polls /prepare until the JVM answers 200 (want instances listed,
// the warm-up sent), the JVM exits, or springPrepareTimeout passes.
func (j *springJVM) prepare(ctx context.Context, want int, path string) error {
	ctx, cancel := context.WithTimeout(ctx, springPrepareTimeout)
	defer cancel()
	q := url.Values{"want": {strconv.Itoa(want)}, "calls": {strconv.Itoa(springWarmupCalls)}, "path": {path}}
	u := j.base + "/prepare?" + q.Encode()
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	last := "no answer yet"
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if resp, err := j.client.Do(req); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
		}
		select {
		case <-j.done:
			return fmt.Errorf("the JVM exited (%v) before it was ready", j.cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("not ready within %s (/prepare: %s)", springPrepareTimeout, last)
		case <-t.C:
		}
	}
}

// kill ends the JVM's process group and waits for the JVM.
func (j *springJVM) kill() {
	_ = syscall.Kill(-j.cmd.Process.Pid, syscall.SIGKILL)
	<-j.done
}

// close kills the JVM and removes its files (nil j: no JVM).
func (j *springJVM) close() {
	if j == nil {
		return
	}
	j.kill()
	j.client.CloseIdleConnections()
	os.RemoveAll(j.dir)
}

// listedNow returns the host:ports the JVM's next request can go to
// (/listed), one answer shared by all callers for springListedFor; nil
// when the JVM does not answer.
func (j *springJVM) listedNow() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if time.Since(j.listedAt) < springListedFor {
		return j.listed
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, j.base+"/listed", nil)
	resp, err := j.client.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil
	}
	j.listed, j.listedAt = strings.Fields(string(b)), time.Now()
	return j.listed
}

// springClient is one of the drill's consumers sending through the run's
// JVM.
type springClient struct {
	jvm    *springJVM
	header http.Header
}

// newSpringClient implements NewClientFunc for ConsumerSpring.
func newSpringClient(c ClientConfig) (Client, error) {
	if c.spring == nil {
		return nil, errors.New("no Spring Cloud consumer running (internal error)")
	}
	return &springClient{jvm: c.spring, header: http.Header{registry.ConsumerHeader: {"c" + strconv.Itoa(c.ID)}}}, nil
}

// Do implements Client: the request through the JVM, whose answer names
// the instance it went to and, when none answered, why.
func (c *springClient) Do(ctx context.Context, r Request) Attempt {
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, c.jvm.base+"/call"+r.Path, body)
	if err != nil {
		return Attempt{Err: err}
	}
	req.Header = c.header
	resp, err := c.jvm.client.Do(req)
	if err != nil {
		return Attempt{Err: fmt.Errorf("spring consumer: %w", err)}
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	att := Attempt{Addr: resp.Header.Get(springProviderHeader), Status: resp.StatusCode, Err: err}
	if why := resp.Header.Get(springErrorHeader); why != "" {
		att.Status, att.Err = 0, springError(why)
	}
	return att
}

// springError turns the JVM's Drainkit-Spring-Error ("kind: message") into
// an error that Classify sorts as the drill's own consumers' are.
func springError(why string) error {
	kind, _, _ := strings.Cut(why, ":")
	var cause error
	switch kind {
	case "no-instance":
		cause = ErrNoEndpoint
	case "refused":
		cause = syscall.ECONNREFUSED
	case "reset":
		cause = syscall.ECONNRESET
	case "eof":
		cause = io.ErrUnexpectedEOF
	case "timeout":
		cause = os.ErrDeadlineExceeded
	}
	return &springErr{why: why, cause: cause}
}

// springErr is a request the JVM got no answer to.
type springErr struct {
	why   string
	cause error
}

func (e *springErr) Error() string { return "spring consumer: " + e.why }
func (e *springErr) Unwrap() error { return e.cause }

// Listed implements Client: the JVM's cached list (or Nacos's while
// nothing is cached), read without refreshing its cache.
func (c *springClient) Listed() []string { return c.jvm.listedNow() }

// Stats implements Client: Spring Cloud LoadBalancer ejects nothing.
func (c *springClient) Stats() ClientStats { return ClientStats{} }

// Close implements Client; the run closes the JVM itself.
func (c *springClient) Close() {}
