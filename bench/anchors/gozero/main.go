// Command gozero is the go-zero anchor: the example service's handlers on a
// go-zero REST server, wired the way go-zero's goctl template generates a
// service (conf.MustLoad of the YAML configuration into rest.RestConf,
// rest.MustNewServer, defer server.Stop(), server.Start()). Here the YAML is
// built from the drill's flags instead of read from etc/*.yaml, and loaded
// with conf.LoadFromYamlBytes so go-zero's defaults apply as they would.
//
// What go-zero does on SIGTERM is in core/proc (v1.10.3, signals.go and
// shutdown.go): wrap-up listeners at once, then after Shutdown.WrapUpTime
// (default 1s) the shutdown listeners, among them the REST server's
// (rest/internal/starter.go): mark its health probe not ready and call
// http.Server.Shutdown; the process is killed after Shutdown.WaitTime
// (default 5.5s; here 1s + the drill's DRAINKIT_DRAIN_TIMEOUT). So go-zero
// keeps serving for 1s after SIGTERM, but readiness stays 200 during it.
//
// Readiness: go-zero's DevServer (service.DevServerConf) is the health
// endpoint go-zero users point Kubernetes probes at; it answers 200 while
// every registered probe is ready and 503 once the REST server marked itself
// not ready. It is configured here on the admin address with HealthPath
// /readyz; metrics and pprof stay off.
//
// Shedding: RestConf.CpuThreshold (default 900) sheds requests with 503 when
// the machine's CPU is above 90%; on a shared benchmark machine that would
// count load shedding as drain failures, so it is 0 (off) here.
//
// Registration: go-zero registers zrpc services in etcd
// (zrpc.RpcServerConf.Etcd, core/discov); its REST servers do not register
// themselves. Once the drill discovers through etcd, the registration goes
// next to the server as a discov.NewPublisher(hosts, key, value) with
// KeepAlive on start and Stop in a proc.AddWrapUpListener.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/zeromicro/go-zero/core/conf"
	"github.com/zeromicro/go-zero/rest"

	"github.com/drainkit/drainkit/bench/anchors/internal/anchor"
)

func main() {
	f := anchor.ParseFlags("gozero")
	c, err := config(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gozero:", err)
		os.Exit(2)
	}
	server := rest.MustNewServer(c)
	defer server.Stop()
	h := anchor.Handler()
	server.AddRoutes([]rest.Route{
		{Method: "GET", Path: "/", Handler: h.ServeHTTP},
		{Method: "GET", Path: "/work", Handler: h.ServeHTTP},
	})
	server.Start()
}

// config builds the RestConf the goctl template would load from YAML.
func config(f anchor.Flags) (rest.RestConf, error) {
	var c rest.RestConf
	host, port, err := anchor.SplitHostPort(f.HTTPAddr)
	if err != nil {
		return c, fmt.Errorf("--http-addr: %w", err)
	}
	ahost, aport, err := anchor.SplitHostPort(f.AdminAddr)
	if err != nil {
		return c, fmt.Errorf("--admin-addr: %w", err)
	}
	wait := time.Second + anchor.DrainTimeout(4500*time.Millisecond)
	yaml := fmt.Sprintf(`Name: drainkit-anchor-gozero
Host: %s
Port: %d
CpuThreshold: 0
Log:
  Mode: console
  Encoding: plain
  Level: error
Shutdown:
  WaitTime: %s
DevServer:
  Enabled: true
  Host: %s
  Port: %d
  HealthPath: /readyz
  EnableMetrics: false
  EnablePprof: false
`, host, port, wait, ahost, aport)
	err = conf.LoadFromYamlBytes([]byte(yaml), &c)
	return c, err
}
