package redlock

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redlease/redlease/internal/redlockx"
)

// Lock is a lock held on a majority of nodes, obtained from
// [Client.Acquire] or [Client.TryAcquire].
//
// The holder must stop acting on the lock at [Lock.ValidUntil]: [Lock.Held]
// turns false then, by the local monotonic clock, whatever the nodes say.
// A Lock is safe for concurrent use. A nil *Lock (what a failed Acquire
// returns) is not held: Held is false, Remaining and Token are zero, and
// Extend and Release return [ErrNotHeld]. It does not refresh itself (see the
// lease package for that) and cannot be re-acquired once released or lost.
type Lock struct {
	c          *Client
	nodes      []*node // the voters of its key
	key, value string
	token      uint64
	ttl        time.Duration
	notice     string // the channel its release PUBLISHes msg on ("": none)
	msg        string
	extendWait time.Duration // bounds each request of an extension, when above NodeTimeout
	acquiredAt time.Time

	strag *stragglers // the acquisition's requests still running

	mu         sync.Mutex
	validUntil time.Time
	released   bool
	fencedAt   time.Time   // the fencing counter's TTL was last set by a call that started then
	lost       []bool      // per node: it answered an extend that the copy is gone; nil while none did (copies.go)
	notedAt    []time.Time // per node: the start of the extend whose answer lost notes; nil before the first (copies.go)
	validFrom  time.Time   // the start of the acquire or extend that set validUntil
	backed     []bool      // per node: it said yes to that call, so its copy lasts to validUntil (clock.go)
}

// Value is the random value that identifies this holder on the nodes.
func (l *Lock) Value() string { return l.value }

// Token is the fencing token of this acquisition: strictly greater than
// the token of every acquisition of the same key that completed before this
// one started, as long as no majority of nodes lost its state together (a
// single forgetful node is quarantined and its floor raised). Pass it to
// the resource the lock protects, and have the resource refuse any write
// whose token is lower than the highest it has seen. 0 when fencing is off.
func (l *Lock) Token() uint64 {
	if l == nil {
		return 0
	}
	return l.token
}

// ValidUntil is the local deadline of the lock: start of the last
// successful acquire or extend + TTL - drift, on the monotonic clock.
// The validity left is time.Until(l.ValidUntil()) while [Lock.Held].
func (l *Lock) ValidUntil() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.validUntil
}

// remaining is the validity left, 0 once the lock is no longer held.
func (l *Lock) remaining() time.Duration {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return 0
	}
	return max(0, time.Until(l.validUntil))
}

// Held reports whether the lock is still held: not released, and before
// its local deadline, checked on every call.
func (l *Lock) Held() bool { return l.remaining() > 0 }

// Extend prolongs the lock to ttl from now (0: the TTL it was acquired
// with) on every node that still holds our value; it never re-creates an
// expired key (once it succeeded, a node that answered that the copy is
// gone gets it back in the background: docs/design.md §4.3). It succeeds only with a majority within validity, and fails
// with ErrNotHeld once the local deadline has passed, even if the nodes
// still answer yes. On failure the lock keeps its previous deadline (a
// *[QuorumError] whose Op is "extend"), or is lost (ErrNotHeld). Each
// request is bounded by NodeTimeout. When ctx ends before a majority
// answered, the error also matches ctx's error.
func (l *Lock) Extend(ctx context.Context, ttl time.Duration) error {
	if l == nil {
		return fmt.Errorf("%w: nil *Lock", ErrNotHeld)
	}
	t0 := time.Now()
	before := l.ValidUntil()
	err := joinCtx(ctx, l.extend(ctx, ttl, l.wait()))
	l.observeExtend(t0, before, err)
	return err
}

// observeExtend reports to the Hooks an extend of l that started at t0
// and ended with err; before is l's deadline before it, so that
// Event.Validity is the margin the extend was made with.
func (l *Lock) observeExtend(t0, before time.Time, err error) {
	if l.c.cfg.Hooks == nil {
		return
	}
	l.c.observe(Event{Kind: EventExtend, Key: l.key, Token: l.token, Duration: time.Since(t0), Err: err, Spare: l.spare(),
		Validity: max(0, time.Until(before))})
}

// wait is how long each request of an extension of l waits for its
// answer: NodeTimeout, or longer when the lock was acquired with
// internal/redlockx.ExtendWait (the lease package's refreshes). A longer
// wait costs no safety, as the new validity counts from the start of the
// extension and a late yes never revives a lock past its deadline.
func (l *Lock) wait() time.Duration {
	return max(l.extendWait, l.c.cfg.NodeTimeout)
}

func (l *Lock) extend(ctx context.Context, ttl, wait time.Duration) error {
	c := l.c
	ttl, err := l.extendable(ttl)
	if err != nil {
		return err
	}
	if err := c.enter(); err != nil {
		return err
	}
	defer c.mu.RUnlock()

	t0 := time.Now()
	// The counter's TTL only when it was last set long ago, as a batch
	// does it (fenceDue): not a command on every extend.
	fence := fenceDue(c.args.fenceEvery, t0, []extendItem{{l: l}})
	plain := c.args.extendCall(l.key, l.value, ttl, fence)
	answers := c.fan.RunWithin(ctx, wait, l.nodes, func(ctx context.Context, n *node) answer {
		sc := plain
		if n.tag != "" {
			// This node's names of the keys plain has (the counter's
			// only when extendCall put it in).
			keys := [...]string{n.lockKey(l.key), n.marker(), n.fenceKey(l.key)}
			sc = plain.WithKeys(keys[:plain.NKeys()]...)
		}
		if err := c.check.Admit(ctx, n); err != nil {
			return answer{vote: voteError, err: err}
		}
		res, err := n.run(ctx, sc)
		if err != nil {
			return answer{vote: voteError, err: err}
		}
		if n.clockOut() {
			return clockOutAnswer(n)
		}
		switch res {
		case int64(1):
			return answer{vote: voteYes}
		case int64(0):
			return answer{vote: voteNo}
		}
		return answer{vote: voteError, err: badReply(res)}
	}, quorumDone(c.quorum), func(n *node, a answer) {
		l.noteCopy(t0, n.idx, a.vote)
		if a.vote == voteNo {
			restoreOn(c, t0, n, ttl, []*Lock{l})
		}
	})

	l.noteCopies(t0, answers)
	err = l.extended(t0, ttl, answers)
	if fence && err == nil {
		l.setFencedAt(t0)
	}
	l.restoreLost(t0, ttl, answers)
	return err
}

// setFencedAt records that a call started at t set the lock's counter TTL.
func (l *Lock) setFencedAt(t time.Time) {
	l.mu.Lock()
	l.fencedAt = t
	l.mu.Unlock()
}

// extendable returns the TTL an extend of the lock with ttl uses (0: the
// lock's own), or why the lock cannot be extended.
func (l *Lock) extendable(ttl time.Duration) (time.Duration, error) {
	l.mu.Lock()
	if ttl == 0 {
		ttl = l.ttl
	}
	released, deadline := l.released, l.validUntil
	l.mu.Unlock()
	if err := l.c.cfg.checkTTL(ttl); err != nil {
		return 0, err
	}
	if released || !time.Now().Before(deadline) {
		return 0, fmt.Errorf("%w: %q: extend after the local deadline", ErrNotHeld, l.key)
	}
	return ttl, nil
}

// extended counts the answers of an extend that started at t0 with ttl
// (Extend's and ExtendAll's): the lock's new deadline, or why not.
func (l *Lock) extended(t0 time.Time, ttl time.Duration, answers []answer) error {
	c := l.c
	yes := 0
	for _, a := range answers {
		if a.vote == voteYes {
			yes++
		}
	}
	now := time.Now()
	newUntil := t0.Add(ttl - c.cfg.drift(ttl))

	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.released:
		return fmt.Errorf("%w: %q: released during extend", ErrNotHeld, l.key)
	case !now.Before(l.validUntil):
		// The old deadline passed while we waited: the lock was lost, and
		// a late yes must not bring it back (docs/design.md S4).
		l.released = true
		l.strag.end(l.unlock())
		c.wg.Go(func() { l.unlock().all(c.fan, l.nodes) }) // wakes waiters
		return fmt.Errorf("%w: %q: the local deadline passed during extend", ErrNotHeld, l.key)
	case yes < c.quorum && l.backersLocked() < c.quorum:
		// The validity rested on copies that no longer count (a node
		// whose clock jumped): it ends now (clock.go).
		l.released = true
		l.strag.end(l.unlock())
		c.wg.Go(func() { l.unlock().all(c.fan, l.nodes) })
		return fmt.Errorf("%w: %q: its validity rested on a node whose clock jumped forward, and fewer than a majority of the others hold it: %w",
			ErrNotHeld, l.key, newQuorumError(c.quorum, l.nodes, "extend", l.key, answers, errNotExtended, ""))
	case yes < c.quorum:
		return newQuorumError(c.quorum, l.nodes, "extend", l.key, answers, errNotExtended, "")
	case newUntil.Sub(now) <= c.cfg.MinValidity:
		return newQuorumError(c.quorum, l.nodes, "extend", l.key, answers, errNotExtended, "validity after extend below MinValidity")
	}
	l.validUntil, l.ttl = newUntil, ttl
	l.validFrom, l.backed = t0, l.backedLocked(t0, answers)
	return nil
}

// Release deletes the lock on every node that still holds our value. It
// returns as soon as a majority has deleted it (others can take the lock
// from then on); slower nodes finish in
// the background (Client.Close waits for them), so a dead or slow node does
// not slow Release down. The lock stops being held before any request is
// sent. Short of a majority, Release waits for every node (bounded by
// NodeTimeout) and fails with ErrNotHeld when no node held it any more (it
// had expired or been taken), or with a *[QuorumError] whose Op is
// "release" when some nodes could not be reached (their copies expire with
// the TTL). Releasing twice returns ErrNotHeld the second time and
// sends nothing. The deletion does not depend on ctx (docs/design.md S8),
// but when ctx has ended Release's error matches ctx's error (joined with
// the deletion's own error, if any). Release has the shape of
// lease.Lease.Release: it returns an error alone.
func (l *Lock) Release(ctx context.Context) error {
	if l == nil {
		return fmt.Errorf("%w: nil *Lock", ErrNotHeld)
	}
	t0 := time.Now()
	n, err := l.release(ctx)
	l.c.observe(Event{Kind: EventRelease, Key: l.key, Token: l.token, Duration: time.Since(t0), Err: err})
	if cerr := ctx.Err(); cerr != nil && err == nil {
		// Deleted all the same (S8); the caller's context had ended.
		err = fmt.Errorf("redlock: %q: released on %d nodes, but the caller's context ended: %w", l.key, n, cerr)
	}
	return joinCtx(ctx, err)
}

func (l *Lock) release(ctx context.Context) (int, error) {
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return 0, fmt.Errorf("%w: %q: already released", ErrNotHeld, l.key)
	}
	l.released = true
	l.strag.end(l.unlock())
	l.mu.Unlock()

	c := l.c
	if err := c.enter(); err != nil {
		return 0, err
	}
	defer c.mu.RUnlock()
	// The caller's ctx may already be cancelled: cleaning up must not
	// depend on it (docs/design.md S8). NodeTimeout bounds every request.
	answers := l.unlock().on(context.WithoutCancel(ctx), c.fan, l.nodes, deletedOnMajority(c.quorum), l.strag.acquiring)
	deleted, errs := 0, 0
	for _, a := range answers {
		switch {
		case a.vote == voteYes:
			deleted++
		case a.vote == voteError && a.err != redlockx.ErrNotAwaited && a.err != errStillAcquiring:
			errs++
		}
	}
	switch {
	case deleted >= c.quorum:
		return deleted, nil
	case errs > 0:
		return deleted, newQuorumError(c.quorum, l.nodes, "release", l.key, answers, errNotReleased, "")
	case deleted == 0:
		return 0, fmt.Errorf("%w: %q: no node held it any more", ErrNotHeld, l.key)
	}
	return deleted, nil
}

// unlock is what a release of l deletes, and the notice it publishes.
func (l *Lock) unlock() unlock {
	return unlock{key: l.key, value: l.value, notice: l.notice, msg: l.msg}
}
