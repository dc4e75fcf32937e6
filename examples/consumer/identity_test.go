package main

import (
	"encoding/json"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/childtest"
	"github.com/drainkit/drainkit/internal/etcdtest"
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
	resp, err := c.Client.Get("http://" + c.Admin + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s struct {
		Requests     int `json:"requests"`
		Failures     int `json:"failures"`
		WrongService int `json:"wrong_service"`
		Ejections    int `json:"ejections"`
		Candidates   []struct {
			Addr    string `json:"addr"`
			Ejected bool   `json:"ejected"`
		} `json:"candidates"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
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
