package redlock

import (
	"context"
	"fmt"
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
// never re-created by the extension; a node that answered that the copy of
// a lock extended is gone gets it back in the background, docs/design.md
// §4.3). A lock of another client, or nil, gets an error
// matching ErrInvalidArgument. Requests are bounded as in Extend
// (NodeTimeout); calls of one ExtendAll run concurrently, and it returns
// when every lock has its result. Each lock sent gets its EventExtend on
// the client's Hooks, as from Extend. When ctx ends first, each error
// also matches ctx's error.
func (c *Client) ExtendAll(ctx context.Context, locks []*Lock) []error {
	errs := make([]error, len(locks))
	batches, wait := batchesOf(c, locks, errs)
	if len(batches) > 0 {
		runBatches(ctx, c, wait, batches, errs)
	}
	for i, err := range errs {
		errs[i] = joinCtx(ctx, err)
	}
	return errs
}

// batchesOf groups c's locks in batches, and sets errs of the locks that
// cannot be extended. Each request of the batches waits as long as the
// shortest wait of the locks given (Lock.wait: NodeTimeout, unless the
// locks were acquired with internal/redlockx.ExtendWait, as the lease
// package's are).
func batchesOf(c *Client, locks []*Lock, errs []error) ([]extendBatch, time.Duration) {
	wait := time.Duration(1<<63 - 1)
	// One batch holds locks of one set of voters (on a bucketed cluster,
	// one bucket: its n copies, one slot each) and one TTL (extend_many
	// takes the TTL once per call), at most maxExtendBatch.
	type batchKey struct {
		set *node
		ttl time.Duration
	}
	open := map[batchKey]extendBatch{}
	var batches []extendBatch
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
	return batches, wait
}

// runBatches runs the batches of c's locks concurrently, each request
// bounded by wait, and returns when every batch has set errs of its locks.
func runBatches(ctx context.Context, c *Client, wait time.Duration, batches []extendBatch, errs []error) {
	if err := c.enter(); err != nil {
		for _, b := range batches {
			for _, it := range b {
				errs[it.i] = err
			}
		}
		return
	}
	defer c.mu.RUnlock()
	if len(batches) == 1 {
		batches[0].run(ctx, wait, errs)
		return
	}
	var wg sync.WaitGroup
	for _, b := range batches {
		wg.Go(func() { b.run(ctx, wait, errs) })
	}
	wg.Wait()
}

// extendItem is one lock of an ExtendAll: its place in the caller's slice,
// and the TTL it is extended with.
type extendItem struct {
	i   int
	l   *Lock
	ttl time.Duration
}

// extendBatch is the locks of one extend_many call per node: locks of one
// Client, one set of voters and one TTL.
type extendBatch []extendItem

// run runs one extend_many call per node for the batch and sets errs of
// its locks (each batch writes its own places only).
func (b extendBatch) run(ctx context.Context, wait time.Duration, errs []error) {
	c := b[0].l.c
	t0 := time.Now()
	fence := fenceDue(c.args.fenceEvery, t0, b)
	nodes := b[0].l.nodes
	plain := c.args.extendManyCall(nil, b, fence)
	votes := make([][]int64, len(nodes)) // node -> lock -> 1 or 0, set before its answer is sent
	answers := c.fan.RunWithin(ctx, wait, nodes, func(ctx context.Context, n *node) answer {
		return b.request(ctx, n, plain, fence, votes)
	}, batchDone(votes, len(b), c.quorum), func(n *node, a answer) {
		if a.vote == voteYes { // votes[n.idx] was set before, in this request's goroutine
			for j, it := range b {
				it.l.noteCopy(t0, n.idx, voteOf(votes[n.idx][j]))
			}
			b.restoreOn(c, t0, n, votes[n.idx])
		}
	})
	b.extended(t0, fence, answers, votes, errs)
	restoreLost(c, t0, nodes, b, votes, answers)
}

// request is the batch's request to node n: extend_many with the call
// plain (on the node's own keys on a cluster); its votes go to
// votes[n.idx], and its answer is yes when the script ran.
func (b extendBatch) request(ctx context.Context, n *node, plain *scriptCall, fence bool, votes [][]int64) answer {
	c := b[0].l.c
	sc := plain
	if n.tag != "" {
		sc = c.args.extendManyCall(n, b, fence)
	}
	if err := c.check.Admit(ctx, n); err != nil {
		return answer{vote: voteError, err: err}
	}
	sent := time.Now()
	res, err := n.run(ctx, sc)
	if err != nil {
		return answer{vote: voteError, err: err}
	}
	recv := time.Now()
	vs, err := extendManyReply(res, len(b))
	if err != nil {
		return answer{vote: voteError, err: err}
	}
	if c.sampleClock(n, sent, recv, vs[len(b)], vs[len(b)+1], b[0].ttl) || n.clockOut() {
		// Its copies no longer count (clock.go).
		return clockOutAnswer(n)
	}
	votes[n.idx] = vs[:len(b)]
	return answer{vote: voteYes} // the script ran; votes[n.idx] has its answers
}

// extendManyReply reads extend_many's reply to a batch of k locks: k
// votes (1 or 0), then the server's TIME (seconds, microseconds).
func extendManyReply(res any, k int) ([]int64, error) {
	a, ok := res.([]any)
	if !ok || len(a) != k+2 {
		return nil, badReply(res)
	}
	vs := make([]int64, len(a))
	if err := intsOf(a, vs, seq(len(a))...); err != nil {
		return nil, err
	}
	for _, v := range vs[:k] {
		if v != 0 && v != 1 {
			return nil, badReply(res)
		}
	}
	return vs, nil
}

// extended counts the answers of the batch's call, which started at t0,
// for each of its locks, and sets its result in errs.
func (b extendBatch) extended(t0 time.Time, fence bool, answers []answer, votes [][]int64, errs []error) {
	c := b[0].l.c
	per := make([]answer, len(answers))
	for j, it := range b {
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
		it.l.noteCopies(t0, per)
		var before time.Time
		if c.cfg.Hooks != nil {
			before = it.l.ValidUntil()
		}
		errs[it.i] = it.l.extended(t0, it.ttl, per)
		it.l.observeExtend(t0, before, errs[it.i])
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
// every is the Client's scriptArgs.fenceEvery.
func fenceDue(every time.Duration, now time.Time, batch []extendItem) bool {
	if every <= 0 {
		return false
	}
	stale := now.Add(-every)
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

// seq returns 0, 1, ..., n-1.
func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
