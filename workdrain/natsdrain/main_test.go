package natsdrain_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"
)

// TestMain runs a worker replica when the test binary is started as one by
// the rolling-restart tests (see replica_test.go), else the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv(envChild); mode != "" {
		os.Exit(replicaMain(mode))
	}
	goleak.VerifyTestMain(m)
}

const (
	streamName   = "WORK"
	consumerName = "workers"
	ackWait      = 5 * time.Second // > the slowest handler (500 ms) with room for a busy machine
)

// startNATS starts a real nats-server with JetStream on a loopback port,
// embedded in the test process, with its store in a temporary directory,
// and creates the stream and the durable pull consumer the workers share.
func startNATS(t *testing.T) (*server.Server, jetstream.JetStream) {
	t.Helper()
	return startNATSAckWait(t, ackWait)
}

// startNATSAckWait is startNATS with the consumer's AckWait.
func startNATSAckWait(t *testing.T, ackWait time.Duration) (*server.Server, jetstream.JetStream) {
	t.Helper()
	s, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready within 10s")
	}
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: streamName, Subjects: []string{"work.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, streamName, jetstream.ConsumerConfig{
		Durable: consumerName, AckPolicy: jetstream.AckExplicitPolicy, AckWait: ackWait, MaxAckPending: 4096,
	}); err != nil {
		t.Fatal(err)
	}
	return s, js
}

// settled waits until the consumer has nothing left: no message pending
// delivery, none delivered and unacknowledged, none waiting for
// redelivery. It returns the last info seen.
func settled(t *testing.T, js jetstream.JetStream, within time.Duration) *jetstream.ConsumerInfo {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cons, err := js.Consumer(ctx, streamName, consumerName)
		var info *jetstream.ConsumerInfo
		if err == nil {
			info, err = cons.Info(ctx)
		}
		cancel()
		if err == nil && info.NumPending == 0 && info.NumAckPending == 0 && info.NumRedelivered == 0 {
			return info
		}
		if time.Now().After(deadline) {
			t.Logf("consumer not settled within %s: %+v (error %v)", within, info, err)
			return info
		}
		<-tick.C
	}
}
