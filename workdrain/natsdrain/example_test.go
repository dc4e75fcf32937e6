package natsdrain_test

import (
	"context"
	"log"
	"net/http"
	"os"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/workdrain"
	"github.com/drainkit/drainkit/workdrain/natsdrain"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A service that takes orders over HTTP and processes them from a JetStream
// stream: it keeps consuming through the propagation window (its last
// requests enqueue work too), then stops pulling, finishes and acks what it
// holds and naks what it cannot finish by drain.timeout. The connection is
// shared with the HTTP handlers, so a stop hook closes it once both are done.
func Example() {
	nc, err := nats.Connect(os.Getenv("NATS_URL"))
	if err != nil {
		log.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		log.Fatal(err)
	}
	cons, err := js.CreateOrUpdateConsumer(context.Background(), "ORDERS", jetstream.ConsumerConfig{
		Durable: "billing", AckPolicy: jetstream.AckExplicitPolicy,
	})
	if err != nil {
		log.Fatal(err)
	}
	w, err := natsdrain.New(natsdrain.Config{
		Consumer:    cons,
		StopAt:      workdrain.AtWindowEnd,
		Concurrency: 32,
		Handler: func(ctx context.Context, msg jetstream.Msg) error {
			return bill(ctx, msg.Data()) // nil acks; an error naks
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /orders/{id}", func(rw http.ResponseWriter, r *http.Request) {
		if _, err := js.Publish(r.Context(), "orders."+r.PathValue("id"), nil); err != nil {
			http.Error(rw, err.Error(), http.StatusServiceUnavailable)
		}
	})
	closeNATS := func(ctx context.Context) error {
		err := nc.FlushWithContext(ctx) // the last acks and naks
		nc.Close()
		return err
	}
	os.Exit(drainkit.Main(drainkit.WithHTTP("http", ":8080", mux), drainkit.WithWorker("billing", w),
		drainkit.OnStop("nats", closeNATS)))
}

func bill(ctx context.Context, order []byte) error { return nil }
