package natsdrain_test

import (
	"os"
	"testing"
	"time"

	"github.com/drainkit/drainkit/workdrain/natsdrain/internal/workerdrill"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"
)

// TestMain runs a worker replica when the test binary is started as one by
// the rolling-restart tests, else the tests.
func TestMain(m *testing.M) {
	workerdrill.ExitIfReplica()
	goleak.VerifyTestMain(m)
}

const (
	streamName   = workerdrill.Stream
	consumerName = workerdrill.Consumer
	ackWait      = 5 * time.Second // > the slowest handler (500 ms) with room for a busy machine
)

// self starts replicas from this test binary, running no test.
var self = workerdrill.Exec{Path: os.Args[0], Args: []string{"-test.run=^$"}}

// startNATS starts a real nats-server with JetStream embedded in the test
// process, with the stream and the durable pull consumer the workers share.
func startNATS(t *testing.T) (*workerdrill.NATS, jetstream.JetStream) {
	t.Helper()
	return startNATSAckWait(t, ackWait)
}

// startNATSAckWait is startNATS with the consumer's AckWait.
func startNATSAckWait(t *testing.T, ackWait time.Duration) (*workerdrill.NATS, jetstream.JetStream) {
	t.Helper()
	n, err := workerdrill.StartNATS(t.TempDir(), ackWait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return n, n.JS
}

// startReplica starts a replica, failing the test if it cannot, and kills
// it at the test's end if it still runs.
func startReplica(t *testing.T, n *workerdrill.NATS, name, strategy, dir string, env ...string) *workerdrill.Replica {
	t.Helper()
	r, err := self.StartReplica(n, name, strategy, dir, env...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Kill)
	return r
}
