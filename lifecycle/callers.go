package lifecycle

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Caller identifies the sender of a request, call or stream, for the
// propagation window's evidence (ServerHooks.Arrived): the window waits for
// each caller by its own rate, not for the instance as a whole to go quiet.
// The zero Caller is a caller like any other (all unknown senders together).
type Caller struct {
	// IP is the peer's address, without its port: a consumer's connection
	// pool uses many ports, and it is the consumer that must move. The zero
	// Addr when the transport has none (a Unix socket).
	IP netip.Addr
	// Identity names the consumer where the request says who it is: the
	// HTTP User-Agent. Empty when unknown; callers on one IP are then told
	// apart by nothing else.
	Identity string
}

// The caller table's shape. It is fixed, so that the request path never
// allocates: callerSlots slots, open addressing with at most callerProbe
// probes from a key's home slot. A caller that finds no slot (the table is
// full of callers seen within forgetAfter) is counted only instance-wide
// (the quiet rule), and the window's end logs once that this happened.
const (
	callerSlots = 256
	callerProbe = 16
	// dueFactor: a caller is due (still expected to send) until this many of
	// its usual gaps have passed since its last request.
	dueFactor = 3
	// ewmaShift weighs each new gap 1/2^ewmaShift in a caller's usual gap.
	ewmaShift = 3
	// forgetAfter is the least age at which a caller's slot may be taken by
	// another caller (never less than propagation.max, past which no
	// caller can hold the window open).
	forgetAfter = time.Minute
)

// callerSlot is one caller's evidence. key, last and gap are atomics, read
// and written on the request path without a lock; the labels (ip,
// identity), written once when a caller takes the slot and read only at the
// window's end, are guarded by mu.
type callerSlot struct {
	key  atomic.Uint64 // hash of the caller (never 0); 0: free
	last atomic.Int64  // offset of its last request from the table's base, ns (>= 1)
	gap  atomic.Int64  // its usual gap: an EWMA of the gaps between its requests, ns; 0: not known yet

	mu       sync.Mutex
	ip       netip.Addr
	identity string
}

// callerTable keeps, per caller, when it last sent and how often it usually
// does (learned before the drain). It is safe for concurrent use; record
// does not allocate, except when a caller takes a slot of an IPv6 address
// with a zone.
type callerTable struct {
	base     time.Time // monotonic origin of the offsets
	forget   time.Duration
	slots    [callerSlots]callerSlot
	overflow atomic.Bool // some caller found no slot
	logged   atomic.Bool // the overflow was logged
}

func (t *callerTable) init(base time.Time, propagationMax time.Duration) {
	t.base = base
	t.forget = max(forgetAfter, propagationMax)
}

// at returns the table's offset of now, at least 1 (0 marks "never").
func (t *callerTable) at(now time.Time) int64 { return max(int64(now.Sub(t.base)), 1) }

// time returns the wall time of the table's offset off.
func (t *callerTable) time(off int64) time.Time { return t.base.Add(time.Duration(off)) }

// hashCaller is FNV-1a over the caller's 16-byte address and its identity;
// never 0.
func hashCaller(c Caller) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	a := c.IP.As16()
	for _, b := range a {
		h = (h ^ uint64(b)) * prime
	}
	if !c.IP.IsValid() {
		h = (h ^ 0xff) * prime // the zero Addr differs from ::
	}
	for i := 0; i < len(c.Identity); i++ {
		h = (h ^ uint64(c.Identity[i])) * prime
	}
	if h == 0 {
		h = 1
	}
	return h
}

// record notes a request of c at now. learn says whether its gap updates
// the caller's usual gap: before the drain always, after it only for a
// caller whose gap is not known yet (the drain itself changes how callers
// send: the usual gap is the one from before it).
func (t *callerTable) record(c Caller, now time.Time, learn bool) {
	k := hashCaller(c)
	off := t.at(now)
	home := int(k % callerSlots)
	for i := 0; i < callerProbe; i++ {
		s := &t.slots[(home+i)%callerSlots]
		switch cur := s.key.Load(); {
		case cur == k:
			t.note(s, off, learn)
			return
		case cur == 0 || off-s.last.Load() > int64(t.forget):
			// Free, or its caller has been silent long enough to be
			// forgotten: take it. Another caller may win it first.
			if !s.key.CompareAndSwap(cur, k) {
				if s.key.Load() == k {
					t.note(s, off, learn)
					return
				}
				continue
			}
			s.gap.Store(0)
			s.last.Store(off)
			s.mu.Lock()
			s.ip, s.identity = c.IP, c.Identity
			s.mu.Unlock()
			return
		}
	}
	t.overflow.Store(true)
}

// note records a request at off on s. The usual gap is updated without a
// lock: concurrent requests of one caller may lose an update, which moves
// an average a little, nothing more.
func (t *callerTable) note(s *callerSlot, off int64, learn bool) {
	prev := s.last.Swap(off)
	old := s.gap.Load()
	if !learn && old != 0 {
		return
	}
	g := max(off-prev, 0)
	if old == 0 {
		s.gap.Store(g)
	} else {
		s.gap.Store(old + (g-old)>>ewmaShift)
	}
}

// callerState is one caller as the window sees it.
type callerState struct {
	IP       netip.Addr
	Identity string
	Gap      time.Duration // usual gap between its requests; 0: not known (one request)
	Last     time.Time     // its last request
	DueUntil time.Time     // when it has moved if it sends nothing more
}

// wait is how long after its last request a caller with usual gap gap is
// still due: dueFactor gaps, at least quiet (a caller seen once, whose gap
// is not known, waits quiet) and at most max (no caller holds the window
// open longer than the window may last).
func callerWait(gap, quiet, maxWindow time.Duration) time.Duration {
	w := time.Duration(dueFactor) * gap
	if w < quiet {
		w = quiet
	}
	if maxWindow > 0 && w > maxWindow {
		w = maxWindow
	}
	return w
}

// dueUntil returns the latest time until which a caller is still due (the
// zero Time if the table is empty), given quiet and max as callerWait
// takes them. It reads only atomics: the window's loop calls it each time
// its timer fires.
func (t *callerTable) dueUntil(quiet, maxWindow time.Duration) time.Time {
	var latest int64
	for i := range t.slots {
		s := &t.slots[i]
		if s.key.Load() == 0 {
			continue
		}
		until := s.last.Load() + int64(callerWait(time.Duration(s.gap.Load()), quiet, maxWindow))
		latest = max(latest, until)
	}
	if latest == 0 {
		return time.Time{}
	}
	return t.time(latest)
}

// due returns the callers still due at end, latest last request first.
func (t *callerTable) due(end time.Time, quiet, maxWindow time.Duration) []callerState {
	var out []callerState
	for i := range t.slots {
		s := &t.slots[i]
		if s.key.Load() == 0 {
			continue
		}
		gap := time.Duration(s.gap.Load())
		last := t.time(s.last.Load())
		until := last.Add(callerWait(gap, quiet, maxWindow))
		if !until.After(end) {
			continue
		}
		s.mu.Lock()
		cs := callerState{IP: s.ip, Identity: s.identity, Gap: gap, Last: last, DueUntil: until}
		s.mu.Unlock()
		out = append(out, cs)
	}
	slices.SortFunc(out, func(a, b callerState) int { return b.Last.Compare(a.Last) })
	return out
}

// describeCallers renders callers for a log line, at most limit of them,
// each with its usual gap and how long before end it last sent; the units
// are in the names.
func describeCallers(callers []callerState, end time.Time, limit int) string {
	var b strings.Builder
	for i, c := range callers {
		if i == limit {
			fmt.Fprintf(&b, "; and %d more", len(callers)-limit)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		ip := "unknown"
		if c.IP.IsValid() {
			ip = c.IP.String()
		}
		fmt.Fprintf(&b, "ip=%s identity=%q usual_gap_ms=%d last_seen_ms_before_end=%d",
			ip, c.Identity, c.Gap.Milliseconds(), end.Sub(c.Last).Milliseconds())
	}
	return b.String()
}
