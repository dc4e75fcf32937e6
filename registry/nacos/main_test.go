package nacos_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/childtest"
	"github.com/drainkit/drainkit/internal/nacostest"
	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/internal/testpoll"
	"github.com/drainkit/drainkit/registry/nacos"
	"github.com/nacos-group/nacos-sdk-go/v2/common/constant"
	sdklogger "github.com/nacos-group/nacos-sdk-go/v2/common/logger"
	"go.uber.org/goleak"
)

// srv is the package's one Nacos server (a start takes 30 s to 2 minutes on
// 2 cores): every test uses service names of its own.
var srv *nacostest.Server

// sdkDir is the children's registry.nacos.sdk_dir: the SDK's files of the
// test's processes stay out of the user's cache directory.
var sdkDir string

// child is internal/nacosservice, built once; TestMain removes it.
var child = childtest.NewOnce("github.com/drainkit/drainkit/registry/nacos/internal/nacosservice")

func TestMain(m *testing.M) {
	s, stop, skip, err := nacostest.StartMain()
	if skip != "" {
		fmt.Println(skip)
		child.RemoveAndExit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		child.RemoveAndExit(1)
	}
	srv = s
	if sdkDir, err = os.MkdirTemp("", "nacos-sdk-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		stop()
		child.RemoveAndExit(1)
	}
	// nacos-sdk-go has one logger per process, made by its first client
	// into that client's log directory and written to until the process
	// exits: made here, it writes into sdkDir, not into the temporary
	// directory of whichever test makes the first client (that directory
	// would be removed under it, racing its writes).
	if err := sdklogger.InitLogger(sdklogger.BuildLoggerConfig(constant.ClientConfig{
		LogDir: filepath.Join(sdkDir, "log"), LogLevel: "warn"})); err != nil {
		fmt.Fprintln(os.Stderr, err)
		stop()
		child.RemoveAndExit(1)
	}
	code := m.Run()
	stop()
	_ = os.RemoveAll(sdkDir)
	if code == 0 {
		// nacos-sdk-go leaves goroutines that CloseClient does not end (the
		// 1.x UDP push receiver, its logger's rotation).
		if err := goleak.Find(sdkGoroutines...); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	sdkConsumerBin.Remove()
	child.RemoveAndExit(code)
}

var sdkGoroutines = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/nacos-group/nacos-sdk-go/v2/clients/naming_client/naming_http.(*PushReceiver).handleClient"),
	goleak.IgnoreAnyFunction("gopkg.in/natefinch/lumberjack%2ev2.(*Logger).millRun"),
	goleak.IgnoreAnyFunction("github.com/nacos-group/nacos-sdk-go/v2/common/remote/rpc.(*RpcClient).Start.func1"),
	goleak.IgnoreAnyFunction("github.com/nacos-group/nacos-sdk-go/v2/common/remote/rpc.(*RpcClient).Start.func2"),
}

var eventually = testpoll.Eventually

func testLogger(t *testing.T) *slog.Logger { lg, _ := testlog.New(t, "registrar log"); return lg }

// testOptions returns options for a registrar of service on port against
// srv: address 127.0.0.1, a read-back every 500ms.
func testOptions(t *testing.T, service string, port int) nacos.Options {
	o := nacos.DefaultOptions(service, port)
	o.Addrs = []string{srv.Addr}
	o.Address = "127.0.0.1"
	o.SyncInterval, o.CallTimeout = 500*time.Millisecond, 500*time.Millisecond
	o.SettleTime = 300 * time.Millisecond
	o.Logger = testLogger(t)
	o.SDKDir = t.TempDir()
	return o
}

// childEnv is the environment of a child registered in srv, with the
// drain timings of childtest.Timings.
func childEnv(extra ...string) []string {
	env := append(srv.Env(), "DRAINKIT_REGISTRY_NACOS_SDK_DIR="+sdkDir)
	return append(append(env, childtest.Timings()...), extra...)
}

func startChild(t *testing.T, args ...string) *childtest.Child {
	t.Helper()
	return childtest.Start(t, child.Path(t), childEnv(), args...)
}

// startAdminChild is startChild with the credentials of srv's admin user:
// its registrar reads the admin API back, and so observes an operator's
// offline.
func startAdminChild(t *testing.T, args ...string) *childtest.Child {
	t.Helper()
	return childtest.Start(t, child.Path(t), childEnv(srv.AdminEnv()...), args...)
}

// instance is one entry of the admin API's instance list.
type instance struct {
	IP       string            `json:"ip"`
	Port     int               `json:"port"`
	Weight   float64           `json:"weight"`
	Healthy  bool              `json:"healthy"`
	Enabled  bool              `json:"enabled"`
	Metadata map[string]string `json:"metadata"`
	ClientID string            `json:"clientId"` // publisherList only
}

// adminList reads every instance of service with the admin API (disabled
// and unhealthy ones included), as an operator's console does.
func adminList(service string) ([]instance, error) {
	return dataList("/v3/admin/ns/instance/list", service)
}

// dataList reads the instances of service from an admin API path that
// answers {"data": [instances]}.
func dataList(path, service string) ([]instance, error) {
	var r struct {
		Code int        `json:"code"`
		Data []instance `json:"data"`
	}
	err := call(http.MethodGet, path, url.Values{"serviceName": {service}}, &r)
	if errors.Is(err, errNoInstance) {
		return nil, nil
	}
	return r.Data, err
}

// consumerList reads what a 1.x consumer sees: healthy, enabled instances.
func consumerList(service string) ([]instance, error) {
	q := url.Values{"serviceName": {service}, "healthyOnly": {"true"}}
	var r struct {
		Hosts []instance `json:"hosts"`
	}
	err := call(http.MethodGet, "/v1/ns/instance/list", q, &r)
	return r.Hosts, err
}

// publisherList reads the instances the server's clients have registered
// for service (the admin API's publisher list), each with its clientId:
// the registrations themselves, not the lists the server's push engine
// rebuilds for consumers.
func publisherList(service string) ([]instance, error) {
	return dataList("/v3/admin/ns/client/service/publisher/list", service)
}

// publishes reports whether the server's client clientID (a connection of
// nacos-sdk-go) still holds a registration in service: the admin API's
// list of the services a client published, which the server changes
// within the deregistration call. (The publisher list by service cannot
// say it: for a moment after a deregistration its index still names the
// client, and Nacos 3.1 then fails the whole read with an internal error.)
func publishes(clientID, service string) (bool, error) {
	var r struct {
		Code int               `json:"code"`
		Data []json.RawMessage `json:"data"`
	}
	if err := call(http.MethodGet, "/v3/admin/ns/client/publish/list", url.Values{"clientId": {clientID}}, &r); err != nil {
		return false, err
	}
	for _, item := range r.Data {
		var svc struct {
			ServiceName string `json:"serviceName"`
		}
		if err := json.Unmarshal(item, &svc); err != nil {
			return false, fmt.Errorf("publish list item %s: %w", item, err)
		}
		if svc.ServiceName == service {
			return true, nil
		}
	}
	return false, nil
}

// setEnabled does what the console's "online"/"offline" does for an
// ephemeral instance: the admin API's instance update.
func setEnabled(t *testing.T, service string, port int, enabled bool) {
	t.Helper()
	q := url.Values{"serviceName": {service}, "ip": {"127.0.0.1"}, "port": {strconv.Itoa(port)},
		"ephemeral": {"true"}, "enabled": {strconv.FormatBool(enabled)}, "weight": {"1"}}
	// The update is a metadata operation through the server's Raft group,
	// which refuses it ("do metadata operation failed") until the group has
	// elected itself, some seconds after a (re)start.
	eventually(t, 30*time.Second, "PUT /v3/admin/ns/instance enabled="+strconv.FormatBool(enabled), func() (bool, string) {
		var r struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		err := call(http.MethodPut, "/v3/admin/ns/instance", q, &r)
		return err == nil && r.Code == 0, fmt.Sprint(err, r)
	})
}

// errNoInstance is Nacos's 404 answer for a service or cluster without
// instances.
var errNoInstance = errors.New("no instance")

// call sends method path?q to srv and decodes a 200's body into out. The
// admin API (/v3/admin/*) is called as an operator does, with the admin's
// access token: Nacos 3 by default refuses it to anyone else.
func call(method, path string, q url.Values, out any) error {
	return callServer(srv, method, path, q, out)
}

func callServer(s *nacostest.Server, method, path string, q url.Values, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if strings.HasPrefix(path, "/v3/admin/") {
		tok, err := s.AdminToken(ctx)
		if err != nil {
			return err
		}
		q = cloneQuery(q)
		q.Set("accessToken", tok)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.BaseURL+path+"?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusNotFound && bytes.Contains(b, []byte(`"code"`)) {
		return fmt.Errorf("%w: %s", errNoInstance, b)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, b)
	}
	return json.Unmarshal(b, out)
}

func cloneQuery(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = v
	}
	return out
}

// find returns the instance on port.
func find(list []instance, port int) (instance, bool) {
	for _, in := range list {
		if in.Port == port {
			return in, true
		}
	}
	return instance{}, false
}

// childPort is the child's service port.
func childPort(t *testing.T, c *childtest.Child) int {
	t.Helper()
	_, p, err := splitPort(c.HTTP)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func splitPort(hostport string) (string, int, error) {
	u, err := url.Parse("http://" + hostport)
	if err != nil {
		return "", 0, err
	}
	p, err := strconv.Atoi(u.Port())
	return u.Hostname(), p, err
}
