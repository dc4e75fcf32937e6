package grpcdrain_test

import (
	"crypto/tls"
	"github.com/drainkit/drainkit/internal/testcert"
	"io"
	"testing"
	"time"

	"github.com/drainkit/drainkit/grpcdrain"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/peer"
)

// With TLS set up through grpc.Creds, calls are served and drained the same
// way, and Draining finds the signal through grpc-go's *tls.Conn.
func TestTLS(t *testing.T) {
	cert, pool := selfSigned(t)
	sawSignal := make(chan bool, 1)
	svc := &testService{stream: func(_ *testpb.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
		p, _ := peer.FromContext(ss.Context())
		_, isTLS := p.AuthInfo.(credentials.TLSInfo)
		drain := grpcdrain.Draining(ss.Context())
		sawSignal <- isTLS && drain != nil
		if err := ss.Send(&testpb.StreamingOutputCallResponse{}); err != nil {
			return err
		}
		<-drain
		return nil
	}}
	creds := credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})
	in := start(t, timings(200*time.Millisecond, 2*time.Second), svc, grpcdrain.WithServerOptions(grpc.Creds(creds)))
	cc, err := grpc.NewClient("passthrough:///"+in.addr, grpc.WithTransportCredentials(
		credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	st, err := testpb.NewTestServiceClient(cc).StreamingOutputCall(ctxTimeout(t, 5*time.Second), &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	if !<-sawSignal {
		t.Fatal("inside a TLS call: not TLS, or Draining(ctx) is nil")
	}
	in.drain()
	if _, err := st.Recv(); err != io.EOF {
		t.Fatalf("stream end: %v; want EOF", err)
	}
	if err := in.wait(10 * time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// selfSigned returns a certificate for 127.0.0.1 and a pool trusting it.
var selfSigned = testcert.SelfSigned
