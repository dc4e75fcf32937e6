package kubernetes

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/drainkit/drainkit/registry"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// Metadata keys of the instances the source delivers (registry.Instance.Meta).
// Each is set only when the EndpointSlice says it.
const (
	// MetaZone is the zone whose consumers the endpoint serves, the key
	// consumer.Zones reads by default: its topology-aware routing hint
	// (hints.forZones) while the hints apply (see Watch), otherwise the
	// zone of the endpoint's node (endpoint.zone).
	MetaZone = "zone"
	// MetaTopologyZone is the zone of the endpoint's node (endpoint.zone,
	// the node's topology.kubernetes.io/zone label) whatever the hints:
	// consumer.Zones.MetaKey = MetaTopologyZone ignores the hints.
	MetaTopologyZone = "topology_zone"
	// MetaPod is the name of the pod behind the endpoint (its targetRef).
	MetaPod = "pod"
	// MetaNode is the name of the endpoint's node (endpoint.nodeName).
	MetaNode = "node"
	// MetaTerminating is "true" on an endpoint delivered because no endpoint
	// is ready: serving but terminating (the KEP-1669 fallback, see Watch).
	MetaTerminating = "terminating"
)

// endpointCopy is one address as one EndpointSlice lists it, with the ports
// of every slice that lists the address.
type endpointCopy struct {
	ep    discoveryv1.Endpoint
	ports []registry.Endpoint // by scheme (the port's name), "" for an unnamed port
}

// instances merges the EndpointSlices of one Service into the instances in
// rotation, sorted by ID (see Watch for the rules). It never returns nil.
func instances(list []*discoveryv1.EndpointSlice, o WatchOptions) []registry.Instance {
	list = slices.SortedFunc(slices.Values(list), func(a, b *discoveryv1.EndpointSlice) int { return cmp.Compare(a.Name, b.Name) })
	byAddr := map[string]*endpointCopy{}
	for _, s := range list {
		if s.AddressType != discoveryv1.AddressTypeIPv4 && s.AddressType != discoveryv1.AddressTypeIPv6 ||
			o.AddressType != "" && s.AddressType != o.AddressType {
			continue
		}
		ports := tcpPorts(s.Ports)
		if len(ports) == 0 {
			continue // nothing to dial
		}
		for _, ep := range s.Endpoints {
			if len(ep.Addresses) == 0 {
				continue
			}
			// The first address is the endpoint's (the others are
			// ignored, as kube-proxy does); canonical form, so that two
			// spellings of one IPv6 address dedupe.
			ip, err := netip.ParseAddr(ep.Addresses[0])
			if err != nil {
				continue
			}
			addr := ip.Unmap().String()
			c := byAddr[addr]
			if c == nil {
				byAddr[addr] = &endpointCopy{ep: ep, ports: slices.Clone(ports)}
				continue
			}
			// Listed twice: an endpoint moving between slices (both copies
			// for a moment), or a pod IP reused while the old pod is still
			// terminating. As kube-proxy: the copy that is not terminating
			// wins (the running pod). The ports are those of both.
			if !isTerminating(ep) {
				c.ep = ep
			}
			for _, p := range ports {
				if !slices.ContainsFunc(c.ports, func(q registry.Endpoint) bool { return q.Scheme == p.Scheme }) {
					c.ports = append(c.ports, p)
				}
			}
		}
	}

	// KEP-1669: the ready endpoints; when there is none, the serving ones
	// that are terminating, so that traffic still has somewhere to go (a
	// scale to zero, every pod of a rollout or a node drain terminating).
	chosen, fallback := choose(byAddr, isReady), false
	if len(chosen) == 0 {
		chosen, fallback = choose(byAddr, func(ep discoveryv1.Endpoint) bool { return isServing(ep) && isTerminating(ep) }), true
	}
	// Topology-aware routing hints apply only when every endpoint taken
	// carries a zone hint (kube-proxy's rule): one without leaves the
	// Service's traffic unallocated.
	hints := !fallback && len(chosen) > 0
	for _, addr := range chosen {
		if hints && (byAddr[addr].ep.Hints == nil || len(byAddr[addr].ep.Hints.ForZones) == 0) {
			hints = false
		}
	}
	out := make([]registry.Instance, 0, len(chosen))
	for _, addr := range chosen {
		if in, ok := instance(addr, byAddr[addr], o, hints, fallback); ok {
			out = append(out, in)
		}
	}
	slices.SortFunc(out, func(a, b registry.Instance) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// choose returns the addresses whose endpoint passes keep.
func choose(byAddr map[string]*endpointCopy, keep func(discoveryv1.Endpoint) bool) []string {
	var out []string
	for addr, c := range byAddr {
		if keep(c.ep) {
			out = append(out, addr)
		}
	}
	return out
}

// instance builds the instance of one address; ok is false when it lacks
// the port WatchOptions.PortName selects.
func instance(addr string, c *endpointCopy, o WatchOptions, hints, fallback bool) (registry.Instance, bool) {
	in := registry.Instance{ID: addr, Address: addr}
	ports := slices.SortedFunc(slices.Values(c.ports), func(a, b registry.Endpoint) int { return cmp.Compare(a.Scheme, b.Scheme) })
	for i := range ports {
		ports[i].Address = addr
	}
	switch {
	case o.PortName != "":
		i := slices.IndexFunc(ports, func(p registry.Endpoint) bool { return p.Scheme == o.PortName })
		if i < 0 {
			return in, false
		}
		in.Port = ports[i].Port
	default:
		in.Port = ports[0].Port // the unnamed port, else the first by name
	}
	// An unnamed port is a Service's only one: it serves every protocol,
	// so it is no endpoint of a scheme (see registry.Instance.ForScheme);
	// the named ones are.
	for _, p := range ports {
		if p.Scheme != "" {
			in.Endpoints = append(in.Endpoints, p)
		}
	}
	meta := map[string]string{}
	ep := c.ep
	if ep.Zone != nil && *ep.Zone != "" {
		meta[MetaTopologyZone] = *ep.Zone
		meta[MetaZone] = *ep.Zone
	}
	if hints {
		meta[MetaZone] = hintedZone(ep.Hints.ForZones, o.Zone)
	}
	if ep.TargetRef != nil && ep.TargetRef.Kind == "Pod" && ep.TargetRef.Name != "" {
		meta[MetaPod] = ep.TargetRef.Name
	}
	if ep.NodeName != nil && *ep.NodeName != "" {
		meta[MetaNode] = *ep.NodeName
	}
	if fallback {
		meta[MetaTerminating] = "true"
	}
	if len(meta) > 0 {
		in.Meta = meta
	}
	return in, true
}

// hintedZone returns the zone an endpoint hinted for zones serves from a
// consumer in local: local when the hints name it, else the first one.
func hintedZone(zones []discoveryv1.ForZone, local string) string {
	if local != "" && slices.ContainsFunc(zones, func(z discoveryv1.ForZone) bool { return z.Name == local }) {
		return local
	}
	return zones[0].Name
}

// tcpPorts returns the TCP ports of a slice that name a port number, each
// as an Endpoint whose Scheme is the port's name ("" when unnamed).
func tcpPorts(ports []discoveryv1.EndpointPort) []registry.Endpoint {
	var out []registry.Endpoint
	for _, p := range ports {
		if p.Port == nil || *p.Port < 1 || *p.Port > 65535 || p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP {
			continue
		}
		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		if slices.ContainsFunc(out, func(e registry.Endpoint) bool { return e.Scheme == name }) {
			continue // names are unique in a valid slice
		}
		out = append(out, registry.Endpoint{Scheme: name, Port: int(*p.Port)})
	}
	return out
}

// The conditions, read as the API says: a nil ready or serving is true, a
// nil terminating is false.
func isReady(ep discoveryv1.Endpoint) bool {
	return ep.Conditions.Ready == nil || *ep.Conditions.Ready
}

func isServing(ep discoveryv1.Endpoint) bool {
	return ep.Conditions.Serving == nil || *ep.Conditions.Serving
}

func isTerminating(ep discoveryv1.Endpoint) bool {
	return ep.Conditions.Terminating != nil && *ep.Conditions.Terminating
}
