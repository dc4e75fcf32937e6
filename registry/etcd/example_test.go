package etcd_test

import (
	"fmt"
	"time"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/registry/etcd"
)

// A kratos service's registration parses into a registry.Instance: address
// and port from the endpoint with the wanted scheme.
func ExampleParseValue() {
	value := `{"id":"orders-1","name":"orders","version":"v1.2.0",
		"metadata":{"drainkit_ready_at":"2026-12-01T06:30:00Z"},
		"endpoints":["grpc://10.0.0.7:9000","http://10.0.0.7:8000?isSecure=false"]}`
	in, err := etcd.ParseValue([]byte(value), "orders", "http")
	if err != nil {
		panic(err)
	}
	at, _ := in.ReadyAt()
	fmt.Println(etcd.Key(etcd.DefaultPrefix, "orders", in.ID))
	fmt.Println(in.HostPort(), at.Format("15:04:05"))
	// Output:
	// /microservices/orders/orders-1
	// 10.0.0.7:8000 06:30:00
}

// OptionsFrom turns drainkit's registry.etcd.* settings into Options; a bad
// setting fails naming its key.
func ExampleOptionsFrom() {
	reg := config.Default().Registry
	reg.Etcd.Endpoints = "10.0.0.1:2379, 10.0.0.2:2379"
	o, err := etcd.OptionsFrom(reg, "orders", 8080)
	fmt.Println(o.Client.Endpoints, o.Prefix, o.TTL, err)

	reg.Etcd.TTL = time.Second
	_, err = etcd.OptionsFrom(reg, "orders", 8080)
	fmt.Println(err)
	// Output:
	// [10.0.0.1:2379 10.0.0.2:2379] /microservices 10s <nil>
	// registry.etcd.ttl: 1s is out of range: must be whole seconds, >= 2s (etcd's minimum lease TTL) and <= 24h0m0s
}
