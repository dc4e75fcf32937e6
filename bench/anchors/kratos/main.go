// Command kratos is the kratos anchor: the example service's handlers on a
// kratos HTTP server, wired the way kratos documents an application
// (kratos-layout's cmd/server/main.go: kratos.New(kratos.Name(...),
// kratos.Server(...)), then app.Run()). What kratos does on SIGTERM is in
// its app.go (v2.8.3, App.Run and App.Stop): run BeforeStop hooks,
// deregister from the Registrar, cancel the app context, then call every
// server's Stop with kratos.StopTimeout (default 10s; here the drill's
// DRAINKIT_DRAIN_TIMEOUT), which for transport/http is http.Server.Shutdown.
// There is no propagation window.
//
// Readiness: kratos v2.8.3 ships no HTTP health endpoint (its source has
// none), so for the Kubernetes probes its users add a route themselves.
// Here it is GET /readyz on a second kratos HTTP server on the admin
// address, 200 while that server runs: both servers are kratos.Server
// arguments, so Stop shuts them down together.
//
// Registration: kratos registers through kratos.Registrar; with etcd that is
// kratos.Registrar(etcd.New(client)) from
// github.com/go-kratos/kratos/contrib/registry/etcd/v2 (go-kratos.dev
// docs/component/registry). registrarOption is where it goes once the drill
// discovers through etcd; until then the drill finds replicas by polling
// /readyz.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/go-kratos/kratos/v2"
	khttp "github.com/go-kratos/kratos/v2/transport/http"

	"github.com/drainkit/drainkit/bench/anchors/internal/anchor"
)

func main() {
	f := anchor.ParseFlags("kratos")
	hs := khttp.NewServer(khttp.Address(f.HTTPAddr))
	hs.HandlePrefix("/", anchor.Handler())
	admin := khttp.NewServer(khttp.Address(f.AdminAddr))
	admin.HandleFunc("/readyz", anchor.Ready)

	opts := []kratos.Option{
		kratos.Name("drainkit-anchor-kratos"),
		kratos.Server(hs, admin),
		kratos.StopTimeout(anchor.DrainTimeout(10 * time.Second)),
	}
	opts = append(opts, registrarOption()...)
	app := kratos.New(opts...)
	if err := app.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "kratos:", err)
		os.Exit(1)
	}
}

// registrarOption returns kratos.Registrar(...) when a registry is
// configured; none is yet (see the package comment).
func registrarOption() []kratos.Option {
	return nil
}
