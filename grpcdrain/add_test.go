package grpcdrain_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/drainkit/drainkit/grpcdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
)

// TestAdd: the one-pass form adds the server to the lifecycle, which serves
// it (health SERVING once READY) and drains it.
func TestAdd(t *testing.T) {
	lc, err := lifecycle.New(lifecycle.Options{Logger: slog.New(slog.DiscardHandler), Signals: []os.Signal{}, Timings: budget.Timings{WarmupTimeout: time.Second, DrainTimeout: time.Second, StopTimeout: time.Second, GracePeriod: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	grpcdrain.Add(lc, "grpc", ln, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- lc.Run(ctx) }()
	cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	hc := healthpb.NewHealthClient(cc)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		cctx, ccancel := context.WithTimeout(context.Background(), time.Second)
		resp, err := hc.Check(cctx, &healthpb.HealthCheckRequest{})
		ccancel()
		if err == nil && resp.Status == healthpb.HealthCheckResponse_SERVING {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health not SERVING within 10s: %v %v", resp, err)
		}
	}
	_ = cc.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
