package loadtest

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
)

// Client is a grpc-go client (plaintext) that balances round robin over the
// addresses the test lists, as a registry's resolver would list instances.
type Client struct {
	*grpc.ClientConn
	r *manual.Resolver
}

// NewClient returns a Client of addrs. Close it when done.
func NewClient(addrs ...string) (*Client, error) {
	r := manual.NewBuilderWithScheme("loadtest")
	r.InitialState(state(addrs))
	cc, err := grpc.NewClient(r.Scheme()+":///instances", grpc.WithResolvers(r),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(`{"loadBalancingConfig":[{"round_robin":{}}]}`))
	if err != nil {
		return nil, err
	}
	return &Client{ClientConn: cc, r: r}, nil
}

// List replaces the listed addresses: calls go to these from now on, and
// connections to the others are closed once their calls end.
func (c *Client) List(addrs ...string) { c.r.UpdateState(state(addrs)) }

func state(addrs []string) resolver.State {
	var s resolver.State
	for _, a := range addrs {
		s.Addresses = append(s.Addresses, resolver.Address{Addr: a})
	}
	return s
}
