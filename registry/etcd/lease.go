package etcd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/drainkit/drainkit/internal/regworker"
	"github.com/drainkit/drainkit/registry"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// step applies the latest wanted health once; its outcome goes to Sync
// callers.
func (r *Registrar) step(ctx context.Context) regworker.Outcome {
	w := r.core.Wanted()
	return regworker.Outcome{Gen: w.Gen, Err: r.apply(ctx, w.Health, w.ReadyAt)}
}

// lostLease reports whether err says that etcd no longer knows the lease:
// it expired (a partition longer than the TTL) or etcd lost its data.
func lostLease(err error) bool { return errors.Is(err, rpctypes.ErrLeaseNotFound) }

// apply makes sure a lease is held and alive, then writes or deletes the key
// as want says. If the lease turns out to be gone, it grants a new one and
// registers again at once (once per step).
func (r *Registrar) apply(ctx context.Context, want registry.Health, readyAt time.Time) error {
	c, err := r.etcdClient()
	if err != nil {
		r.core.Failed("client", err)
		return err
	}
	for attempt := 0; ; attempt++ {
		if r.held == 0 {
			err = r.grant(ctx, c)
		} else {
			err = r.keepAlive(ctx, c)
		}
		if err == nil {
			err = r.converge(ctx, c, want, readyAt)
		}
		if err != nil && lostLease(err) && attempt == 0 {
			r.forgetLease(err)
			continue
		}
		return err
	}
}

// forgetLease drops a lease etcd no longer knows; the key went with it.
func (r *Registrar) forgetLease(err error) {
	r.log.Warn("etcd: the lease is gone (etcd lost its data, or the lease expired); granting a new one and registering again",
		"lease", fmt.Sprintf("%x", int64(r.held)), "error", err)
	r.held, r.keyWritten = 0, false
	r.setLease(0)
	r.core.Update(func(s *registry.Status) { s.Health = registry.Absent })
}

// grant obtains a new lease of TTL.
func (r *Registrar) grant(ctx context.Context, c *clientv3.Client) error {
	cctx, cancel := r.callCtx(ctx)
	defer cancel()
	ttl := int64(r.opts.TTL / time.Second)
	resp, err := c.Grant(cctx, ttl)
	if err != nil {
		r.core.Failed("grant lease", err)
		return err
	}
	if resp.TTL != ttl {
		r.log.Warn("etcd: the server granted another TTL than asked (its minimum lease TTL)", "asked_ms", ttl*1000, "granted_ms", resp.TTL*1000)
	}
	r.held, r.keyWritten = resp.ID, false
	r.setLease(resp.ID)
	r.core.Wrote(nil)
	return nil
}

// setLease sets the lease Lease reports.
func (r *Registrar) setLease(id clientv3.LeaseID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lease = id
}

// keepAlive renews the lease once.
func (r *Registrar) keepAlive(ctx context.Context, c *clientv3.Client) error {
	cctx, cancel := r.callCtx(ctx)
	defer cancel()
	if _, err := c.KeepAliveOnce(cctx, r.held); err != nil {
		if !lostLease(err) {
			r.core.Failed("keep-alive", err)
		}
		return err
	}
	r.core.Wrote(nil)
	return nil
}

// converge writes the key (READY) or deletes it (EJECTED) if it is not so
// already, or if the READY time changed.
func (r *Registrar) converge(ctx context.Context, c *clientv3.Client, want registry.Health, readyAt time.Time) error {
	var err error
	switch {
	case want == registry.Passing && (!r.keyWritten || !r.written.Equal(readyAt)):
		err = r.writeKey(ctx, c, readyAt)
	case want != registry.Passing && r.keyWritten:
		err = r.deleteKey(ctx, c)
	}
	if err != nil {
		return err
	}
	r.core.Wrote(func(s *registry.Status) { s.Health = want })
	return nil
}

// ErrKeyHeld is returned (wrapped) by Sync when the instance's key is
// attached to another lease: another process registered the same ID (see
// the package documentation on identity). The Registrar retries on every
// keep-alive period and registers once that lease is revoked or expires.
var ErrKeyHeld = errors.New("etcd: the instance key is held by another lease")

// writeKey writes the key under the lease in one transaction, unless the key
// belongs to another lease: a key belongs to its lease.
//
//	if lease(key) == 0 (no key, or a key without lease): put
//	else if lease(key) == ours: put
//	else: get (report the holder)
func (r *Registrar) writeKey(ctx context.Context, c *clientv3.Client, readyAt time.Time) error {
	value, err := r.value(readyAt)
	if err != nil {
		return err
	}
	put := clientv3.OpPut(r.key, value, clientv3.WithLease(r.held))
	ours := clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.LeaseValue(r.key), "=", r.held)},
		[]clientv3.Op{put}, []clientv3.Op{clientv3.OpGet(r.key)})
	cctx, cancel := r.callCtx(ctx)
	defer cancel()
	resp, err := c.Txn(cctx).If(clientv3.Compare(clientv3.LeaseValue(r.key), "=", 0)).Then(put).Else(ours).Commit()
	if err != nil {
		if !lostLease(err) {
			r.core.Failed("write key", err)
		}
		return err
	}
	if !resp.Succeeded {
		inner := resp.Responses[0].GetResponseTxn()
		if !inner.Succeeded {
			err := fmt.Errorf("%w: %s", ErrKeyHeld, r.key)
			if kvs := inner.Responses[0].GetResponseRange().GetKvs(); len(kvs) > 0 {
				err = fmt.Errorf("%w: %s is attached to lease %x", ErrKeyHeld, r.key, kvs[0].Lease)
			}
			r.core.Failed("write key", err)
			return err
		}
	}
	first := r.counted != r.held // the first write under this lease: a registration
	r.keyWritten, r.written, r.counted = true, readyAt, r.held
	var n int
	r.core.Wrote(func(s *registry.Status) { // one update: Status never shows the count without the health
		if first {
			s.Registrations++
		}
		n, s.Health = s.Registrations, registry.Passing
	})
	if first {
		r.log.Info("etcd: registered", "key", r.key, "lease", fmt.Sprintf("%x", int64(r.held)), "ttl_ms", r.opts.TTL.Milliseconds(),
			"revision", resp.Header.Revision, "registrations", n)
	} else {
		r.log.Info("etcd: key written again under the same lease", "key", r.key, "revision", resp.Header.Revision)
	}
	return nil
}

// deleteKey deletes the key if it is still attached to our lease, keeping
// the lease alive: EJECTED leaves discovery but stays ready to come back.
func (r *Registrar) deleteKey(ctx context.Context, c *clientv3.Client) error {
	cctx, cancel := r.callCtx(ctx)
	defer cancel()
	resp, err := c.Txn(cctx).If(clientv3.Compare(clientv3.LeaseValue(r.key), "=", r.held)).
		Then(clientv3.OpDelete(r.key)).Commit()
	if err != nil {
		r.core.Failed("delete key", err)
		return err
	}
	r.keyWritten = false
	r.log.Info("etcd: key deleted while ejected; the lease is kept", "key", r.key, "revision", resp.Header.Revision)
	return nil
}

// value is the key's value: kratos's instance JSON with the READY time in
// its metadata.
func (r *Registrar) value(readyAt time.Time) (string, error) {
	meta := maps.Clone(r.opts.Meta)
	if meta == nil {
		meta = map[string]string{}
	}
	meta[registry.MetaReadyAt] = readyAt.UTC().Format(time.RFC3339Nano)
	eps := r.opts.endpoints()
	urls := make([]string, len(eps))
	for i, e := range eps {
		urls[i] = e.String()
	}
	return encodeValue(kratosInstance{ID: r.id, Name: r.opts.Service, Version: r.opts.Version, Metadata: meta, Endpoints: urls})
}
