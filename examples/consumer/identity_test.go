package main

import (
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/childtest"
	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
)

// An address the consumer calls for orders is served by another drainkit
// service (payments, as after a recycled pod IP): its answers name it, the
// consumer discards them, ejects the address and retries on orders; every
// call succeeds.
func TestWrongServiceAtAddressEjected(t *testing.T) {
	srv := etcdtest.Start(t) // registered services name themselves in their answers
	orders := childtest.Start(t, serviceBin, srv.Env(), "--service", "orders")
	payments := childtest.Start(t, serviceBin, srv.Env(), "--service", "payments")
	c := childtest.Start(t, consumerBin, nil, "--service", "orders", "--targets", orders.HTTP+","+payments.HTTP)
	for i := range 30 {
		if code, body := get(t, c, "/"); code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, code, body)
		}
	}
	s := readStatus(t, c)
	ejected := false
	for _, cand := range s.Candidates {
		if cand.Addr == payments.HTTP {
			ejected = cand.Ejected
		}
	}
	if s.Requests != 30 || s.Failures != 0 || s.WrongService != 1 || s.Ejections != 1 || !ejected {
		t.Errorf("status %+v: want 30 requests, 0 failures, payments' one answer discarded and its address ejected", s)
	}
	for _, p := range []*childtest.Child{c, orders, payments} {
		p.Signal(syscall.SIGTERM)
		p.WaitExit(30 * time.Second)
	}
}
