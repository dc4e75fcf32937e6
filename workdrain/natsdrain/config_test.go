package natsdrain_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/workdrain/natsdrain"
	"github.com/nats-io/nats.go/jetstream"
)

// A bad Config fails at New with the field's name and the allowed range.
func TestConfigErrorsNameTheField(t *testing.T) {
	_, js := startNATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cons, err := js.Consumer(ctx, streamName, consumerName)
	if err != nil {
		t.Fatal(err)
	}
	h := func(context.Context, jetstream.Msg) error { return nil }
	for _, tc := range []struct {
		c    natsdrain.Config
		want string
	}{
		{natsdrain.Config{Handler: h}, "Config.Consumer is required"},
		{natsdrain.Config{Consumer: cons}, "Config.Handler is required"},
		{natsdrain.Config{Consumer: cons, Handler: h, Concurrency: -1}, "Config.Concurrency -1 out of range: 1 to 65536"},
		{natsdrain.Config{Consumer: cons, Handler: h, FetchMaxWait: time.Millisecond}, "Config.FetchMaxWait 1ms out of range"},
		{natsdrain.Config{Consumer: cons, Handler: h, AckTimeout: -time.Second}, "Config.AckTimeout -1s out of range"},
		{natsdrain.Config{Consumer: cons, Handler: h, StopAt: 7}, "Config.StopAt 7"},
	} {
		if _, err := natsdrain.New(tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", tc.c, err, tc.want)
		}
	}
	if _, err := natsdrain.New(natsdrain.Config{Consumer: cons, Handler: h}); err != nil {
		t.Errorf("New with defaults: %v", err)
	}
}
