package drill

import (
	"context"
	"testing"
	"time"
)

func TestBarrierWaitsForEveryPartyOnce(t *testing.T) {
	b := newBarrier(2)
	p1, p2 := b.party(), b.party()
	p1()
	p1() // a second arrival of the same party does not count
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := b.wait(ctx); err == nil {
		t.Fatal("wait returned with one of two parties arrived")
	}
	p2()
	if err := b.wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}
