package lifecycle

import (
	"os"
	"testing"
	"testing/synctest"
	"time"
)

// unroutedServer is a fakeServer that nothing routes to, as a workdrain
// Worker (Routed false).
type unroutedServer struct{ *fakeServer }

func (unroutedServer) Routed() bool { return false }

// routedServer says it is routed (Routed true), as a server may that wraps
// either kind.
type routedServer struct{ *fakeServer }

func (routedServer) Routed() bool { return true }

// TestWindowOnlyWhenDiscoverable runs on synctest's clock: the drain holds
// the propagation window (here propagation.min 1s after deregistration)
// only while something can route to the instance: a registrar, or a server
// that does not report Routed false. An instance of workers alone, or of no
// server, that registers nowhere goes from t0 straight to closing the
// listeners, and its drain still runs every other step (issue 33 item 5).
func TestWindowOnlyWhenDiscoverable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		add     func(l *Lifecycle, rec *recorder)
		wantWin time.Duration
	}{
		{"worker only", func(l *Lifecycle, rec *recorder) { l.AddServer("jobs", unroutedServer{newFakeServer(rec, "jobs")}) }, 0},
		{"nothing", func(*Lifecycle, *recorder) {}, 0},
		{"worker and registrar", func(l *Lifecycle, rec *recorder) {
			l.AddServer("jobs", unroutedServer{newFakeServer(rec, "jobs")})
			l.AddRegistrar("reg", newFakeRegistrar(rec))
		}, time.Second},
		{"worker and HTTP", func(l *Lifecycle, rec *recorder) {
			l.AddServer("jobs", unroutedServer{newFakeServer(rec, "jobs")})
			l.AddServer("http", newFakeServer(rec, "http"))
		}, time.Second},
		{"routed", func(l *Lifecycle, rec *recorder) { l.AddServer("grpc", routedServer{newFakeServer(rec, "grpc")}) }, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &recorder{}
				l := newTest(t, Options{Timings: fastTimings(time.Second, 0, 2*time.Second), Signals: []os.Signal{}})
				tc.add(l, rec)
				res := runAsync(l)
				waitState(t, l, Ready)
				_ = l.Drain("test")
				if err := waitResult(t, res, 5*time.Second); err != nil {
					t.Fatal(err)
				}
				tl, _ := l.Timeline()
				win, ok := tl.Offset(StepWindowEnded)
				closed, closedOK := tl.Offset(StepListenersClosed)
				_, stopped := tl.Offset(StepStopHooksDone)
				if !ok || win != tc.wantWin || !closedOK || closed != win || !stopped {
					t.Fatalf("steps %+v: want the window ended at %s, the listeners closed then and the stop hooks done", tl.Steps, tc.wantWin)
				}
			})
		})
	}
}
