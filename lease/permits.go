package lease

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/internal/permitkey"
	"github.com/redlease/redlease/internal/redlockx"
	"github.com/redlease/redlease/redlock"
)

// A semaphore of K permits on a name (Config.Permits = K > 1) is K plain
// leases' keys: permit i is held, refreshed, fenced and lost as a lease on
// its own key, so S1 holds per permit and at most K hold at once
// (docs/design.md §5.3; internal/permitkey names the keys). The permits share the name's notice channel: a
// permit's release notice names its key ("released <key>"), so a waiter
// woken by it tries that permit first. An attempt starts at a random
// permit and tries them in turn, so that contenders spread over the free
// permits instead of all trying permit 0 first.

// permits is how many permits an acquirer with cfg takes from:
// Config.Permits (1 for a plain lease), one more under the negative
// control PermitsPlusOne.
func permits(client *redlock.Client, cfg Config) int {
	k := max(cfg.Permits, 1)
	if k > 1 && extraPermit(client) {
		k++
	}
	return k
}

// permitOpts are the acquisition options of permit i: the lease's, and the
// release notice on the name's channel, naming the permit's key when the
// lease is a semaphore's.
func (a *acquirer) permitOpts(i int) []redlock.AcquireOption {
	msg := notice.Message{Kind: notice.Released}
	if a.k > 1 {
		msg.Value = permitkey.Key(a.key, i)
	}
	return append(a.opts[:len(a.opts):len(a.opts)], redlockx.ReleaseNotice(a.channel, msg.Encode()))
}

// scan is one attempt at each permit, from a random one on, until one is
// acquired. It stops at the first error that no other permit can cure (a
// final error, the end of ctx).
func (a *acquirer) scan(ctx context.Context) (*Lease, error) {
	k := a.k
	start := rand.IntN(k)
	var err error
	for j := range k {
		i := (start + j) % k
		var l *Lease
		if l, err = a.tryPermit(ctx, i); err == nil {
			return l, nil
		}
		if ctx.Err() != nil || redlock.IsFinal(err) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("lease: %q: none of the %d permits was free; the last: %w", a.key, k, err)
}

// released returns the permit a notice says was released: its index, or -1
// for a notice that names none (a plain lease's, on permit 0's key, or an
// unknown kind: try every permit), and false for a notice that frees no
// permit of ours (an acquisition, steering, a permit above ours).
func (a *acquirer) released(payload string) (int, bool) {
	m := notice.Parse(payload)
	switch {
	case m.Kind == notice.Other || m.Kind == notice.Released && m.Value == "":
		return -1, true
	case m.Kind != notice.Released:
		return 0, false
	}
	i, ok := permitkey.Index(a.key, m.Value)
	return i, ok && i < a.k
}

// drained drops the notices already queued on sub, mostly the other
// nodes' notices of the same release (each node where the keys were
// deleted sends one), so that one release costs a waiter one attempt, not
// one per node. It returns the permit to try: i, or -1 (every permit) when
// the queued notices name another one too.
func (a *acquirer) drained(sub redlockx.Subscription, i int) int {
	for {
		select {
		case n := <-sub.C():
			if j, ok := a.released(n.Payload); ok && j != i {
				i = -1
			}
		default:
			return i
		}
	}
}
