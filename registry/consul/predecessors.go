package consul

import (
	"context"
	"errors"
	"net"
	"net/netip"

	"github.com/hashicorp/consul/api"
)

// removePredecessors deregisters earlier drainkit registrations of the same
// service on this agent with the same explicit address and port, if this
// process can prove it holds that address and port (see holdsAddress):
// their processes are then gone (see the package documentation). A failure
// is logged and retried before the next registration attempt.
func (r *Registrar) removePredecessors(ctx context.Context) {
	if r.opts.KeepPredecessors {
		r.predecessorsRemoved = true
		return
	}
	if ok, why := holdsAddress(r.opts.Address); !ok {
		r.log.Info("consul: not removing predecessors: this process cannot prove it holds the registered address and port", "reason", why)
		r.predecessorsRemoved = true
		return
	}
	cctx, cancel := r.callCtx(ctx)
	defer cancel()
	svcs, err := r.client.Agent().ServicesWithFilterOpts("", (&api.QueryOptions{}).WithContext(cctx))
	if err != nil {
		r.core.Failed("list predecessors", err)
		return
	}
	var errs []error
	for id, s := range svcs {
		if id == r.id || s.Service != r.opts.Service || s.Address != r.opts.Address || s.Port != r.opts.Port || s.Meta[metaManaged] == "" {
			continue
		}
		err := r.call(ctx, "remove predecessor", func(q *api.QueryOptions) error {
			return r.client.Agent().ServiceDeregisterOpts(id, q)
		})
		if err != nil && !lostInstance(err) {
			errs = append(errs, err)
			continue
		}
		r.log.Info("consul: removed a dead predecessor's registration on this address and port", "predecessor_id", id)
	}
	r.predecessorsRemoved = errors.Join(errs...) == nil
}

// holdsAddress reports whether a process registered on addr (and on the port
// it listens on, as Options.Port requires) can prove that no other live
// process is registered on the same address and port: addr must be an
// explicit IP address of one of this host's network interfaces. An empty
// address proves nothing: Consul substitutes the node's address, which every
// instance behind one agent shares (pods behind a per-node agent), so two
// live processes can register the same empty address and port. Nor does a
// host name or an address of another host (NAT, a load balancer). why says
// which case applies when ok is false.
func holdsAddress(addr string) (ok bool, why string) {
	if addr == "" {
		return false, "empty registry address: Consul uses the node's address, shared by every instance on the agent"
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return false, "registry address " + addr + " is not an IP address"
	}
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		return false, "cannot list this host's addresses: " + err.Error()
	}
	for _, a := range ifaddrs {
		if n, ok := a.(*net.IPNet); ok {
			if local, ok := netip.AddrFromSlice(n.IP); ok && local.Unmap() == ip.Unmap() {
				return true, ""
			}
		}
	}
	return false, "registry address " + addr + " is not an address of this host"
}
