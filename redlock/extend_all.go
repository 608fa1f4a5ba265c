package redlock

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redlease/redlease/internal/lockrule"
)

// maxExtendBatch is how many locks one extend_many script call carries at
// most (internal/lockrule).
const maxExtendBatch = lockrule.MaxExtendBatch

// ExtendAll extends many locks of this client at once, each to its own TTL
// (the one it was acquired or last extended with): one multi-key
// compare-and-PEXPIRE script call per node for every 256 locks of one TTL,
// instead of one call per lock per node. Each lock's result has the meaning
// of [Lock.Extend] for that lock alone: errs[i] is nil when locks[i] now
// has a new deadline (from the start of its batch, counted like Extend: a
// majority within validity), a *[QuorumError] (Op "extend") when it keeps
// its old one, or ErrNotHeld when it is lost (a late yes never revives a
// lock whose deadline passed, and a key that no longer holds our value is
// never re-created). A lock of another client, or nil, gets an error
// matching ErrInvalidArgument. Requests are bounded as in Extend
// (NodeTimeout); calls of one ExtendAll run concurrently, and it returns
// when every lock has its result. Each lock sent gets its EventExtend on
// the client's Hooks, as from Extend. When ctx ends first, each error
// also matches ctx's error.
func (c *Client) ExtendAll(ctx context.Context, locks []*Lock) []error {
	errs := c.extendAll(ctx, locks)
	for i, err := range errs {
		errs[i] = joinCtx(ctx, err)
	}
	return errs
}

// extendAll is ExtendAll without the context's error joined. Each request
// waits as long as the shortest wait of the locks given (Lock.wait:
// NodeTimeout, unless the locks were acquired with
// internal/redlockx.ExtendWait, as the lease package's are).
func (c *Client) extendAll(ctx context.Context, locks []*Lock) []error {
	errs := make([]error, len(locks))
	wait := time.Duration(1<<63 - 1)
	// One batch holds locks of one set of voters (on a bucketed cluster,
	// one bucket: its n copies, one slot each) and one TTL (extend_many
	// takes the TTL once per call), at most maxExtendBatch.
	type batchKey struct {
		set *node
		ttl time.Duration
	}
	open := map[batchKey][]extendItem{}
	var batches [][]extendItem
	for i, l := range locks {
		if l == nil || l.c != c {
			errs[i] = fmt.Errorf("%w: lock %d is nil or of another client", ErrInvalidArgument, i)
			continue
		}
		wait = min(wait, l.wait())
		ttl, err := l.extendable(0)
		if err != nil {
			errs[i] = err
			continue
		}
		k := batchKey{l.nodes[0], ttl}
		b := append(open[k], extendItem{i: i, l: l, ttl: ttl})
		if len(b) == maxExtendBatch {
			batches = append(batches, b)
			b = nil
		}
		open[k] = b
	}
	for _, b := range open {
		if len(b) > 0 {
			batches = append(batches, b)
		}
	}
	if len(batches) == 0 {
		return errs
	}
	if err := c.enter(); err != nil {
		for _, b := range batches {
			for _, it := range b {
				errs[it.i] = err
			}
		}
		return errs
	}
	defer c.mu.RUnlock()
	if len(batches) == 1 {
		c.extendBatch(ctx, wait, batches[0], errs)
		return errs
	}
	var wg sync.WaitGroup
	for _, b := range batches {
		wg.Go(func() { c.extendBatch(ctx, wait, b, errs) })
	}
	wg.Wait()
	return errs
}

// extendItem is one lock of an ExtendAll: its place in the caller's slice,
// and the TTL it is extended with.
type extendItem struct {
	i   int
	l   *Lock
	ttl time.Duration
}

// extendBatch runs one extend_many call per node for the batch and sets
// errs of its locks (each batch writes its own places only).
func (c *Client) extendBatch(ctx context.Context, wait time.Duration, batch []extendItem, errs []error) {
	t0 := time.Now()
	fence := c.fenceDue(t0, batch)
	nodes := batch[0].l.nodes
	plain := extendManyCall(c, nil, batch, fence)
	votes := make([][]int64, len(nodes)) // node -> lock -> 1 or 0, set before its answer is sent
	answers := c.fanoutWithin(ctx, wait, nodes, func(ctx context.Context, n *node) answer {
		sc := plain
		if n.tag != "" {
			sc = extendManyCall(c, n, batch, fence)
		}
		if err := c.check.Admit(ctx, n); err != nil {
			return answer{vote: voteError, err: err}
		}
		res, err := n.run(ctx, sc)
		if err != nil {
			return answer{vote: voteError, err: err}
		}
		a, ok := res.([]any)
		if !ok || len(a) != len(batch) {
			return answer{vote: voteError, err: badReply(res)}
		}
		vs := make([]int64, len(a))
		if err := intsOf(a, vs, seq(len(a))...); err != nil {
			return answer{vote: voteError, err: err}
		}
		for _, v := range vs {
			if v != 0 && v != 1 {
				return answer{vote: voteError, err: badReply(res)}
			}
		}
		votes[n.idx] = vs
		return answer{vote: voteYes} // the script ran; votes[n.idx] has its answers
	}, c.batchDone(votes, len(batch)), func(n *node, a answer) {
		if a.vote == voteYes { // votes[n.idx] was set before, in this request's goroutine
			for j, it := range batch {
				it.l.noteCopy(n.idx, voteOf(votes[n.idx][j]))
			}
		}
	})

	per := make([]answer, len(nodes))
	for j, it := range batch {
		for i, a := range answers {
			switch {
			case a.vote != voteYes:
				per[i] = a
			case votes[i][j] == 1:
				per[i] = answer{vote: voteYes}
			default:
				per[i] = answer{vote: voteNo}
			}
		}
		it.l.noteCopies(per)
		errs[it.i] = it.l.extended(t0, it.ttl, per)
		if c.cfg.Hooks != nil {
			c.observe(Event{Kind: EventExtend, Key: it.l.key, Token: it.l.token, Duration: time.Since(t0), Err: errs[it.i],
				Spare: it.l.spare()})
		}
		if fence && errs[it.i] == nil {
			it.l.setFencedAt(t0)
		}
	}
}

// voteOf is the vote of an extend_many answer for one lock: 1 yes, 0 no.
func voteOf(v int64) vote {
	if v == 1 {
		return voteYes
	}
	return voteNo
}

// fenceDue reports whether the batch's call (or one lock's Extend) must
// also set the TTL of the locks' fencing counters: when one of them was
// last set more than a quarter of the counter TTL ago. Setting it on every
// extend would cost a command per lock per refresh for a TTL of
// counterTTLFactor x MaxTTL; leases refreshed together stay in one batch,
// so a batch sets them all once in a while. (A counter that expires anyway
// is safe: the next grant starts from the node's high-water mark, 3.4.)
func (c *Client) fenceDue(now time.Time, batch []extendItem) bool {
	if c.args.fenceEvery <= 0 {
		return false
	}
	stale := now.Add(-c.args.fenceEvery)
	for _, it := range batch {
		it.l.mu.Lock()
		old := it.l.fencedAt.Before(stale)
		it.l.mu.Unlock()
		if old {
			return true
		}
	}
	return false
}

// batchDone is a fanout done func for extendBatch: every lock of the batch
// has a majority of yes, or can no longer get one.
func (c *Client) batchDone(votes [][]int64, k int) func([]answer, []bool) bool {
	return func(as []answer, got []bool) bool {
		for j := range k {
			yes, open := 0, 0
			for i, a := range as {
				switch {
				case !got[i]:
					open++
				case a.vote == voteYes && votes[i][j] == 1:
					yes++
				}
			}
			if yes < c.quorum && yes+open >= c.quorum {
				return false
			}
		}
		return true
	}
}

// extendManyCall is the extend_many call of a batch (its locks share one
// TTL), on node n's keys (nil: the keys as named, for standalone nodes);
// fence: set the fencing counters' TTL too (only then are the counters'
// keys sent).
func extendManyCall(c *Client, n *node, batch []extendItem, fence bool) *scriptCall {
	nk := 1 + len(batch)
	if fence {
		nk += len(batch)
	}
	keys := make([]string, 0, nk)
	args := make([]any, 0, 4+len(batch))
	if n == nil {
		keys = append(keys, markerKey)
	} else {
		keys = append(keys, n.marker())
	}
	args = append(args, c.args.maxTTL, c.args.mode, c.counterArg(fence), strconv.FormatInt(batch[0].ttl.Milliseconds(), 10))
	for _, it := range batch {
		if n == nil {
			keys = append(keys, it.l.key)
		} else {
			keys = append(keys, n.lockKey(it.l.key))
		}
		args = append(args, it.l.value)
	}
	if fence {
		for _, it := range batch {
			if n == nil {
				keys = append(keys, it.l.key+":fence")
			} else {
				keys = append(keys, n.fenceKey(it.l.key))
			}
		}
	}
	return newCall(scriptMany, keys, args...)
}

// seq returns 0, 1, ..., n-1.
func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
