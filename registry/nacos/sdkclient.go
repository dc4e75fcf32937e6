package nacos

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nacos-group/nacos-sdk-go/v2/clients"
	"github.com/nacos-group/nacos-sdk-go/v2/clients/naming_client"
	"github.com/nacos-group/nacos-sdk-go/v2/common/constant"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"
)

// sdkClientsMade counts the nacos-sdk-go clients made (each a gRPC
// connection and goroutines, some of which outlive CloseClient), for the
// tests: a full read must not make one.
var sdkClientsMade atomic.Int64

// sdkLife serialises making and closing nacos-sdk-go clients: v2.3.5 adds
// a client to a process-wide map under a lock (rpc.CreateClient) but
// removes it on close without one (RpcClient.Shutdown), so a close beside
// another client's making is a data race in the SDK (go test -race reports
// it). Against a server that never answers it is held for the whole making
// (9 s); only the background goroutines of dial and subscribe wait for it,
// never a caller past its context.
var sdkLife sync.Mutex

// sdkClient is a nacos-sdk-go naming client with its cache directory.
type sdkClient struct {
	naming_client.INamingClient
	removeCache func()
}

// newSDKClient creates a naming client for s, its files under sdkDir (see
// processDir), its local caches never read. It blocks while the client
// connects: against a server that accepts and never answers, nacos-sdk-go
// v2.3.5 tries three times, 3 s each, and takes no context; use dialSDK
// where a caller must not wait for that.
func newSDKClient(s Server, timeout time.Duration, sdkDir string) (*sdkClient, error) {
	logDir, cacheDir, removeCache, err := sdkDirs.clientDirs(sdkDir)
	if err != nil {
		return nil, err
	}
	sdkClientsMade.Add(1)
	cc := constant.ClientConfig{
		NamespaceId:          s.Namespace,
		TimeoutMs:            uint64(timeout.Milliseconds()),
		NotLoadCacheAtStart:  true,  // a cache left by an earlier process is stale evidence
		UpdateCacheWhenEmpty: false, // (the SDK's default) never used for decisions here
		LogLevel:             "warn",
		Username:             s.Username,
		Password:             s.Password,
	}
	sdkFiles(&cc, logDir, cacheDir)
	var sc []constant.ServerConfig
	for _, a := range s.Addrs {
		host, port, _ := net.SplitHostPort(a) // checked by Validate
		p, _ := strconv.Atoi(port)
		sc = append(sc, constant.ServerConfig{IpAddr: sdkHost(host), Port: uint64(p), GrpcPort: uint64(p + 1000),
			ContextPath: s.ContextPath, Scheme: "http"})
	}
	sdkLife.Lock()
	c, err := clients.NewNamingClient(vo.NacosClientParam{ClientConfig: &cc, ServerConfigs: sc})
	sdkLife.Unlock()
	if err != nil {
		removeCache()
		return nil, fmt.Errorf("nacos: client: %w", err)
	}
	return &sdkClient{INamingClient: c, removeCache: removeCache}, nil
}

// sdkHost is host as ServerConfig.IpAddr must hold it: nacos-sdk-go
// appends ":" and a port to IpAddr for every address it dials (gRPC,
// HTTP, login), so an IPv6 literal goes in brackets, or "::1" would dial
// "::1:9848".
func sdkHost(host string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

// close closes the client, then removes its cache directory.
func (c *sdkClient) close() {
	sdkLife.Lock()
	c.CloseClient()
	sdkLife.Unlock()
	c.removeCache()
}

// dial is one nacos-sdk-go client being made by newSDKClient in a
// goroutine of its own, so that no caller waits for the SDK's connection
// attempts longer than its context allows.
type dial struct {
	done chan struct{} // closed once newSDKClient returned
	c    *sdkClient    // set before done closes; nil on error
	err  error
}

// sdkSettle is how long a new client waits after connecting before its
// first call. nacos-sdk-go v2.3.5 sends the connection's setup on its
// stream and sleeps 100 ms, assuming the server has registered the
// connection by then; a busy server has not, answers the first call
// "Connection is unregistered" (301), and the SDK abandons the new
// connection for another. That costs a second connection, and the SDK's
// reconnect writes its current connection unsynchronised while its event
// goroutine reads it (nacos-sdk-go#905; go test -race reports it). The
// server gives no sign of the registration, so the wait is a margin: five
// times the SDK's.
const sdkSettle = 500 * time.Millisecond

// dialSDK starts making a client (see newSDKClient); the client is handed
// out sdkSettle after it connected.
func dialSDK(s Server, timeout time.Duration, sdkDir string) *dial {
	d := &dial{done: make(chan struct{})}
	go func() {
		defer close(d.done)
		d.c, d.err = newSDKClient(s, timeout, sdkDir)
		if d.err == nil {
			time.Sleep(sdkSettle)
		}
	}()
	return d
}

// get returns the client once made, or an error wrapping ctx's when ctx
// ends first (the making goes on).
func (d *dial) get(ctx context.Context) (*sdkClient, error) {
	select {
	case <-d.done:
		return d.c, d.err
	case <-ctx.Done():
		return nil, fmt.Errorf("nacos: client still connecting: %w", ctx.Err())
	}
}

// ready returns the client if it has been made, else nil, without waiting.
func (d *dial) ready() *sdkClient {
	select {
	case <-d.done:
		return d.c
	default:
		return nil
	}
}

// failed reports whether making the client has failed (a new dial is
// due).
func (d *dial) failed() bool {
	select {
	case <-d.done:
		return d.err != nil
	default:
		return false
	}
}

// close closes the client once made, waiting for both at most until ctx
// ends: then they go on in the background and close reports it. Against a
// server that accepts and never answers, making the client takes 9 s and
// closing it can take longer.
func (d *dial) close(ctx context.Context) error {
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		<-d.done
		if d.c != nil {
			d.c.close()
		}
	}()
	select {
	case <-closed:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("nacos: closing the client did not finish in time (%w); it goes on in the background", context.Cause(ctx))
	}
}
