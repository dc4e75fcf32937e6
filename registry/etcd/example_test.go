package etcd_test

import (
	"fmt"

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
