package grpcdrain_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/drainkit/drainkit/grpcdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// A drain as a health-checking client sees it: SERVING while READY,
// NOT_SERVING from t0, while calls are still served through the propagation
// window.
func Example_health() {
	lc, _ := lifecycle.New(lifecycle.Options{Signals: []os.Signal{}, Logger: slog.New(slog.DiscardHandler), Timings: budget.Timings{
		WarmupTimeout: time.Second, PropagationMin: time.Second, PropagationMax: time.Second,
		DrainTimeout: time.Second, StopTimeout: time.Second, GracePeriod: 5 * time.Second,
	}})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	lc.AddServer("grpc", grpcdrain.New(lc, ln, nil))
	sub, unsubscribe := lc.Subscribe()
	runErr := make(chan error, 1)
	go func() { runErr <- lc.Run(context.Background()) }()
	for lc.State() != lifecycle.Ready {
		<-sub
	}
	unsubscribe()

	cc, _ := grpc.NewClient("passthrough:///"+ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	defer cc.Close()
	hc := healthpb.NewHealthClient(cc)
	check := func(when string) {
		// Health follows the lifecycle from a subscription: give it a moment.
		var r *healthpb.HealthCheckResponse
		var err error
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if r, err = hc.Check(context.Background(), &healthpb.HealthCheckRequest{}); err == nil && (when == "ready") == (r.Status == healthpb.HealthCheckResponse_SERVING) {
				break
			}
		}
		fmt.Println(when+":", r.GetStatus(), err)
	}
	check("ready")
	_ = lc.Drain("rolling restart")
	for { // until the servers are in lame duck (the not_ready step)
		if tl, _ := lc.Timeline(); len(tl.Steps) > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	check("draining")
	fmt.Println("Run:", <-runErr)
	// Output:
	// ready: SERVING <nil>
	// draining: NOT_SERVING <nil>
	// Run: <nil>
}
