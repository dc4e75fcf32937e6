package natsdrain_test

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/workdrain"
	"github.com/drainkit/drainkit/workdrain/natsdrain"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// steps is an Observer that signals READY and each drain step.
type steps struct {
	mu      sync.Mutex
	ready   chan struct{}
	reached map[string]chan struct{}
}

func newSteps() *steps {
	s := &steps{ready: make(chan struct{}), reached: map[string]chan struct{}{}}
	for _, n := range []string{lifecycle.StepNotReady, lifecycle.StepWindowEnded, lifecycle.StepListenersClosed} {
		s.reached[n] = make(chan struct{})
	}
	return s
}

func (s *steps) OnTransition(t lifecycle.Transition) {
	if t.To == lifecycle.Ready {
		close(s.ready)
	}
}

func (s *steps) OnDrainStep(_ lifecycle.Timeline, st lifecycle.Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch, ok := s.reached[st.Name]; ok {
		close(ch)
		delete(s.reached, st.Name)
	}
}

func (s *steps) wait(t *testing.T, name string) {
	t.Helper()
	s.mu.Lock()
	ch, ok := s.reached[name]
	s.mu.Unlock()
	if !ok {
		return // reached already
	}
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("drain step %s not reached within 30s", name)
	}
}

// A worker that also serves HTTP, whose requests enqueue its work: with
// AtWindowEnd it keeps consuming through the propagation window (a request
// that arrives during the window enqueues a message this worker processes)
// and stops at the window's end (a message published after it is left for
// the other replicas). With AtDrainStart the window's message is left too:
// the check can fail.
func TestWindowEndKeepsConsumingWhileServing(t *testing.T) {
	for _, tc := range []struct {
		stopAt   workdrain.Phase
		wantLate bool
	}{{workdrain.AtWindowEnd, true}, {workdrain.AtDrainStart, false}} {
		t.Run(tc.stopAt.String(), func(t *testing.T) {
			s, js := startNATS(t)
			nc, err := nats.Connect(s.Server.ClientURL())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			wjs, err := jetstream.New(nc)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cons, err := wjs.Consumer(ctx, streamName, consumerName)
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			processed := map[string]bool{}
			took := make(chan string, 16)
			w, err := natsdrain.New(natsdrain.Config{
				Consumer: cons, StopAt: tc.stopAt, Concurrency: 4, Conn: nc,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
				Handler: func(ctx context.Context, msg jetstream.Msg) error {
					id := string(msg.Data())
					took <- id
					mu.Lock()
					processed[id] = true
					mu.Unlock()
					return nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			obs := newSteps()
			lc, err := lifecycle.New(lifecycle.Options{Signals: []os.Signal{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Timings: budget.Timings{
				WarmupTimeout: 5 * time.Second, PropagationMin: 2 * time.Second, PropagationMax: 2 * time.Second,
				DrainTimeout: 3 * time.Second, StopTimeout: time.Second, GracePeriod: 15 * time.Second,
			}, Observers: []lifecycle.Observer{obs}})
			if err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			mux.HandleFunc("POST /orders/{id}", func(rw http.ResponseWriter, r *http.Request) {
				id := r.PathValue("id")
				if _, err := js.Publish(r.Context(), "work."+id, []byte(id)); err != nil {
					http.Error(rw, err.Error(), http.StatusInternalServerError)
				}
			})
			lc.AddServer("http", httpdrain.New(&http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, ln))
			lc.AddServer("nats", w)
			done := make(chan error, 1)
			go func() { done <- lc.Run(context.Background()) }()
			<-obs.ready

			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
			order := func(id string) {
				t.Helper()
				resp, err := client.Post("http://"+ln.Addr().String()+"/orders/"+id, "text/plain", nil)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("POST /orders/%s: %s", id, resp.Status)
				}
			}
			order("before")
			if id := <-took; id != "before" {
				t.Fatalf("took %q, want before", id)
			}
			if err := lc.Drain("test"); err != nil {
				t.Fatal(err)
			}
			obs.wait(t, lifecycle.StepNotReady)
			order("late") // during the window: the HTTP server still serves
			obs.wait(t, lifecycle.StepListenersClosed)
			pctx, pcancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err = js.Publish(pctx, "work.after", []byte("after"))
			pcancel()
			if err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatalf("Run = %v, want nil", err)
			}
			mu.Lock()
			gotLate, gotAfter := processed["late"], processed["after"]
			mu.Unlock()
			if gotLate != tc.wantLate {
				t.Errorf("%s: the message enqueued during the window processed = %v, want %v", tc.stopAt, gotLate, tc.wantLate)
			}
			if gotAfter {
				t.Errorf("%s: a message published after the window ended was taken", tc.stopAt)
			}
			// What this replica left is there for the others, now.
			want := []string{"after"}
			if !tc.wantLate {
				want = []string{"late", "after"}
			}
			left := fetchAll(t, js, len(want))
			if strings.Join(left, ",") != strings.Join(want, ",") {
				t.Errorf("left for the other replicas: %v, want %v", left, want)
			}
		})
	}
}

// fetchAll fetches n messages from the shared consumer as another replica
// would, acks them and returns their ids, sorted by stream sequence.
func fetchAll(t *testing.T, js jetstream.JetStream, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cons, err := js.Consumer(ctx, streamName, consumerName)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(n, jetstream.FetchMaxWait(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		seq uint64
		id  string
	}
	var all []got
	for msg := range batch.Messages() {
		md, _ := msg.Metadata()
		all = append(all, got{md.Sequence.Stream, string(msg.Data())})
		_ = msg.Ack()
	}
	slices.SortFunc(all, func(a, b got) int { return cmp.Compare(a.seq, b.seq) })
	var ids []string
	for _, g := range all {
		ids = append(ids, g.id)
	}
	return ids
}
