package grpcdrain_test

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/drainkit/drainkit/grpcdrain"
	"github.com/drainkit/drainkit/lifecycle"
)

// goroutinesIn returns the stacks of the goroutines running fn (a function's
// name as a stack trace prints it, e.g. "google.golang.org/grpc.(*Server).Stop(").
func goroutinesIn(fn string) [][]byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var in [][]byte
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte(fn)) {
			in = append(in, g)
		}
	}
	return in
}

// A handler that ignores both the drain signal and its context's
// cancellation runs past drain.timeout. grpc-go before v1.85.0 deadlocks
// grpc.Server.Stop called while GracefulStop waits for such a handler
// (grpc-go#9393), and grpcdrain allows v1.84.0 (grpc v1.85.0 needs go 1.26;
// `make go125` runs this test with v1.84.0): grpcdrain never calls Stop on
// a grpc.Server whose GracefulStop runs. The drain ends at drain.timeout
// all the same: the stream is cut (UNAVAILABLE, its context cancelled) and
// counted as force-closed, Run returns exit code 1, and, while the handler
// still runs, no goroutine hangs in Stop and Serve returns lingerMax after
// the force close (it waited twice that once). When the handler returns,
// nothing of the server is left running.
func TestHandlerIgnoringCancellation(t *testing.T) {
	const (
		window = 200 * time.Millisecond
		drain  = 500 * time.Millisecond
	)
	before := goleak.IgnoreCurrent()
	cancelled, returned := make(chan struct{}), make(chan struct{})
	held := make(chan struct{})
	release := sync.OnceFunc(func() { close(held) })
	t.Cleanup(release) // a failed test lets the handler go
	svc := &testService{stream: func(_ *testpb.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
		defer close(returned)
		if err := ss.Send(&testpb.StreamingOutputCallResponse{}); err != nil {
			return err
		}
		<-ss.Context().Done()
		close(cancelled)
		<-held // ignores the cancellation
		return nil
	}}
	in := start(t, timings(window, drain), svc)
	cc := dial(t, in.addr)
	st, err := testpb.NewTestServiceClient(cc).StreamingOutputCall(ctxTimeout(t, 10*time.Second), &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	in.drain()
	if _, err := st.Recv(); status.Code(err) != codes.Unavailable {
		t.Errorf("cut stream ended with %v; want UNAVAILABLE", err)
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context was not cancelled")
	}
	if code := lifecycle.ExitCode(in.wait(10 * time.Second)); code != 1 {
		t.Fatalf("exit code %d; want 1", code)
	}
	if tl := in.timeline(); tl.ForceClosed != 1 {
		t.Errorf("force-closed %d; want 1", tl.ForceClosed)
	}
	forcedAt := in.stepAt(lifecycle.StepForceClosed)

	// The handler still runs. Serve gives up waiting for it lingerMax after
	// the force close; measured against the step the lifecycle recorded
	// just after ForceClose returned. The stack names this test's Server
	// (its receiver); a stack dump stops the world, so every 10ms.
	serve := fmt.Sprintf("grpcdrain.(*Server).Serve(%p", in.gd)
	for len(goroutinesIn(serve)) != 0 {
		if time.Since(forcedAt) > 4*grpcdrain.LingerMax {
			t.Fatalf("Serve still running %s after the force close", time.Since(forcedAt))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if d := time.Since(forcedAt); d > grpcdrain.LingerMax+grpcdrain.LingerMax/2 {
		t.Errorf("Serve returned %s after the force close; want about lingerMax (%s)", d, grpcdrain.LingerMax)
	}
	if stop := goroutinesIn("google.golang.org/grpc.(*Server).Stop("); len(stop) != 0 {
		t.Errorf("%d goroutines in grpc.Server.Stop while the handler runs (grpc-go#9393):\n%s", len(stop), bytes.Join(stop, []byte("\n\n")))
	}
	select {
	case <-returned:
		t.Fatal("the handler returned before it was let go")
	default:
	}

	release()
	<-returned
	cc.Close() // the goroutines of the test's client are not the server's
	goleak.VerifyNone(t, before)
}
