package redlock

import (
	"context"
	"strconv"
	"time"

	"github.com/redlease/redlease/internal/scripts"
)

// Restoring lost copies (docs/design.md §4.3): when a node answers an
// extension of a lock that its copy is gone (in time for the call, or
// after it returned), the holder puts the copy back there
// (restore_many.lua: SET NX PX with the lock's TTL, the fencing counter
// left at or above the token), in the background, and only if that
// extension succeeded (a majority within validity set the lock's deadline)
// and the lock is still held when the request is sent. The copy only
// ever blocks others, and counts for the holder only in extensions, which
// keep their own rules (a majority within validity; S4). So a lock that
// lost one node's copy under load no longer dies with the next node it
// loses.

// restoreLost sends each node whose answer to the batch that started at
// t0 is in (answers[i] yes: the script ran) a restore of the locks it said
// it lost (votes[i][j] == 0), one request per node.
func restoreLost(c *Client, t0 time.Time, nodes []*node, b extendBatch, votes [][]int64, answers []answer) {
	for i, a := range answers {
		if a.vote == voteYes {
			b.restoreOn(c, t0, nodes[i], votes[i])
		}
	}
}

// restoreOn sends node n a restore of the locks of the batch (started at
// t0) it said it lost (votes[j] == 0), if any.
func (b extendBatch) restoreOn(c *Client, t0 time.Time, n *node, votes []int64) {
	var lost []*Lock
	for j, it := range b {
		if votes[j] == 0 {
			lost = append(lost, it.l)
		}
	}
	if len(lost) > 0 {
		restoreOn(c, t0, n, b[0].ttl, lost)
	}
}

// restoreLost is restoreLost for one lock's Extend with ttl that started
// at t0: its answers[i] is l.nodes[i]'s.
func (l *Lock) restoreLost(t0 time.Time, ttl time.Duration, answers []answer) {
	for i, a := range answers {
		if a.vote == voteNo {
			restoreOn(l.c, t0, l.nodes[i], ttl, []*Lock{l})
		}
	}
}

// restoreOn starts, in the background (Close waits for it), the restore
// of locks on node n with ttl, after their extension that started at t0.
// Called while c is entered (c.mu read-held) or from a request that c.wg
// counts (an answer that came after its call returned). A lock is left
// out unless, when the request is sent, it is held and that extension
// set its deadline (restorable).
func restoreOn(c *Client, t0 time.Time, n *node, ttl time.Duration, locks []*Lock) {
	if c.cfg.unsafeOff.noRestore() {
		return // the negative control
	}
	c.wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.NodeTimeout)
		defer cancel()
		if c.check.Admit(ctx, n) != nil {
			return
		}
		sent := time.Now()
		held := locks[:0:0]
		for _, l := range locks {
			if l.restorable(t0) || c.cfg.unsafeOff.restoreLate() {
				held = append(held, l)
			}
		}
		if len(held) == 0 {
			return // past the deadline: never restored (S4)
		}
		res, err := n.run(ctx, c.args.restoreManyCall(n, ttl, held))
		vs, err := restoreReply(res, err, len(held))
		if err != nil {
			c.log.Debug("lock copy not restored", "node", n.name(), "locks", len(held), "error", err)
			return
		}
		for j, l := range held {
			if vs[j] == 1 {
				l.restored(sent, n)
			}
		}
	})
}

// restored handles a restore of l's copy on n, sent at t, that made it:
// noted, or deleted again when l was released or lost meanwhile. Release
// marks the lock gone before it sends its deletions, and this reads gone
// after the restore ran, so a restore that landed after a release's
// deletion on n is deleted here, and one that landed before, by the
// release (as an acquisition's stragglers, docs/design.md §4.3): no
// restored copy outlives a release by more than its own request. The
// deletion here is the release's own (stragglers.release), with its
// notice, so that a waiter subscribed on n hears of the release from n
// too.
func (l *Lock) restored(t time.Time, n *node) {
	if l.strag != nil && l.strag.gone.Load() {
		n.runAlone(l.c.cfg.NodeTimeout, l.strag.release(n, l.key, l.value))
		return
	}
	l.noteRestored(t, n.idx)
}

// restorable reports whether l is held, with the deadline set by its
// extension that started at t0 (a majority within validity): a lock whose
// extension failed (a majority said no: its copies are gone, which a
// restore must not make up for, S4) or was overtaken is left alone.
func (l *Lock) restorable(t0 time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.released && time.Now().Before(l.validUntil) && l.validFrom.Equal(t0)
}

// restoreReply reads restore_many's reply to k locks: k integers, each 1
// (restored), 0 (the key exists) or -1 (the counter is above the token).
func restoreReply(res any, err error, k int) ([]int64, error) {
	if err != nil {
		return nil, err
	}
	a, ok := res.([]any)
	if !ok || len(a) != k {
		return nil, badReply(res)
	}
	vs := make([]int64, k)
	if err := intsOf(a, vs, seq(k)...); err != nil {
		return nil, err
	}
	return vs, nil
}

// restoreManyCall is the restore_many call of locks on node n's keys, with
// ttl.
func (sa *scriptArgs) restoreManyCall(n *node, ttl time.Duration, locks []*Lock) *scriptCall {
	keys := make([]string, 0, 1+2*len(locks))
	args := make([]any, 0, 3+2*len(locks))
	keys = append(keys, n.marker())
	args = append(args, sa.maxTTL, sa.mode, strconv.FormatInt(ttl.Milliseconds(), 10))
	for _, l := range locks {
		keys = append(keys, n.lockKey(l.key), n.fenceKey(l.key))
		args = append(args, l.value, strconv.FormatUint(l.token, 10))
	}
	return scripts.NewCall(scripts.RestoreMany, keys, args...)
}
