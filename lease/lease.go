package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/redlock"
)

// Lease is a lock on a key held on a majority of Redis nodes, refreshed by
// its own goroutine, that tells its holder when it ends: [Lease.Context] is
// cancelled, with the reason as its cause (context.Cause), no later than
// ValidUntil - SafetyMargin by the local monotonic clock.
//
// A Lease is obtained from [Acquire] or [TryAcquire] and ends once, for
// good: it is lost (ErrLeaseLost), released ([Lease.Release], ErrReleased),
// or its context ended (the context given to Acquire was cancelled). An
// ended lease is never brought back by a late refresh; acquire a new one.
//
// A Lease is safe for concurrent use by multiple goroutines.
type Lease struct {
	client *redlock.Client
	lock   *redlock.Lock
	key    string // the lease's (and its lock's)
	log    hclog.Logger

	// The timings of the Config it was acquired with (the rest of the
	// Config is not needed after the acquisition: a lease keeps only
	// what it uses, since a process may hold 100,000 of them).
	renew, retry, margin time.Duration

	// ctx is the lease's context; it is cancelled, with the reason as its
	// cause, exactly when the lease ends.
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu         sync.Mutex
	validUntil time.Time // the lock's local deadline, after the last refresh
	err        error     // why the lease ended; set once, then constant

	timer    *time.Timer // the deadline timer (expire); Reset under mu
	lastErr  error       // of the last failed refresh, nil after a success
	failures int32       // failed refreshes in a row
	inflight bool        // a refresh is in flight

	// Guarded by sched.mu (scheduler.go). (The small fields sit beside
	// others to leave no padding: a Lease is 256 bytes.)
	gone   bool   // ended: never scheduled again
	permit uint16 // the semaphore permit held (0 for a plain lease); constant
	sched  *scheduler
	due    monoTime    // when the next refresh is due
	round  *roundState // the batch in flight that carries the lease, if any

	stopParent  func() bool    // unregisters the parent-context callback (nil if none); under mu
	exited      sync.WaitGroup // done when ended has run and the acquire notice was sent
	releaseOnce sync.Once      // deleting the keys happens once
	hidx        int32          // index in the scheduler's heap, -1 when not in it; under sched.mu
	releaseErr  error          // result of deleting the keys, set in releaseOnce
}

// Holder returns the lease as others see it: its key (of the permit held,
// for a semaphore's lease: Config.Permits), the permit's index (Permit),
// the value stored in its keys (unique per acquisition), the ID and
// Metadata published in it, its token, and its validity now (Remaining,
// and Expires: ValidUntil). Every call returns a fresh copy.
func (l *Lease) Holder() redlock.Holder {
	d := notice.DecodeValue(l.lock.Value()) // (decoded on demand: not kept in every lease)
	vu := l.ValidUntil()
	return redlock.Holder{Key: l.key, Permit: int(l.permit), Value: l.lock.Value(), ID: d.ID, Metadata: d.Metadata,
		Token: l.Token(), Remaining: max(0, time.Until(vu)), Expires: vu}
}

// Token returns the fencing token of the acquisition (see
// redlock.Lock.Token): strictly greater than the token of every earlier
// acquisition of the key. Pass it to the resource the lease protects, and
// have that resource refuse writes with a lower token than it has seen:
// that is what protects it from a holder that acts after its lease ended
// (a long pause, a clock running slow). 0 when the client has fencing off.
func (l *Lease) Token() uint64 { return l.lock.Token() }

// Context returns a context that is cancelled when the lease ends, no
// later than ValidUntil - SafetyMargin: its Done channel closes then, and
// its cause (context.Cause) says why, for good: an error matching
// ErrLeaseLost (wrapping the reason, such as the last refresh error),
// ErrReleased, or the cause of the context given to [Acquire]
// (context.Canceled, context.DeadlineExceeded, or a custom cause). Work
// done on behalf of the lease should run under it.
func (l *Lease) Context() context.Context { return l.ctx }

// ValidUntil returns the local deadline of the lock under the lease, on the
// monotonic clock: the start of the last successful acquire or refresh +
// TTL - drift. It moves forward with every refresh. The lease itself ends
// Config.SafetyMargin earlier: that is when [Lease.Held] turns false.
func (l *Lease) ValidUntil() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.validUntil
}

// deadline returns when the lease ends unless it is refreshed before:
// ValidUntil - SafetyMargin. It moves forward with every refresh.
func (l *Lease) deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadlineLocked()
}

func (l *Lease) deadlineLocked() time.Time { return l.validUntil.Add(-l.margin) }

// Held reports whether the lease is still held. It checks the deadline on
// every call, by the local clock: it is false from ValidUntil - SafetyMargin on, even
// if the refresh goroutine has not run yet, and false for good once the
// lease has ended. Check it (or the Context's Done) before every action
// the lease guards.
func (l *Lease) Held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ctx.Err() == nil && time.Now().Before(l.deadlineLocked())
}

// Release ends the lease, if it has not ended yet, with ErrReleased: it
// stops its refreshes, then deletes the keys on every node that
// still holds them (which also publishes the release notice that wakes
// waiters). The deletion does not depend on ctx's cancellation (ctx only
// carries values): redlock bounds each request by the client's NodeTimeout.
// Release returns once redlock has its verdict on the deletion and every
// goroutine of the lease has returned; requests to nodes slower than the
// verdict may finish in the background (the client's Close waits for them).
//
// Release may be called any number of times, from any goroutine, also after
// the lease was lost (which deleted its keys in the background: Release then
// waits for that). Every call returns the result of the one deletion: nil
// when the keys are gone (deleted, or already expired), or a
// *redlock.QuorumError (Op "release") naming the nodes that could not be
// reached (their copies expire with the TTL), joined, when ctx had ended,
// with an error matching ctx's error. Either way the lease is over.
func (l *Lease) Release(ctx context.Context) error {
	l.end(ErrReleased)
	l.exited.Wait()
	l.releaseKeys(ctx)
	if err := ctx.Err(); err != nil {
		// Released all the same; the error tells the caller its ctx ended.
		return errors.Join(l.releaseErr, fmt.Errorf("lease: %q: released, but the caller's context ended: %w", l.key, err))
	}
	return l.releaseErr
}

// end ends the lease with cause, unless it has ended already. The first
// cancellation wins (ours or the parent context's), and l.err records the
// cause that won, so it always equals context.Cause(l.ctx).
//
// The first end starts ended, in a goroutine of its own: whoever ends the
// lease (a timer, the scheduler, Release) never waits for the keys'
// deletion.
func (l *Lease) end(cause error) {
	l.cancel(cause)
	l.mu.Lock()
	first := l.err == nil
	if first {
		l.err = context.Cause(l.ctx)
	}
	l.mu.Unlock()
	if first {
		go l.ended()
	}
}

// releaseKeys deletes the lease's keys on every node, once; later calls
// wait for the first and do nothing.
func (l *Lease) releaseKeys(ctx context.Context) {
	l.releaseOnce.Do(func() {
		t0 := time.Now()
		err := l.lock.Release(context.WithoutCancel(ctx))
		switch {
		case errors.Is(err, redlock.ErrNotHeld):
			// Expired, taken, or released by redlock already: nothing left.
			l.log.Debug("lease keys already gone", "key", l.key, "token", l.Token(), "error", err)
			err = nil
		case err != nil:
			l.log.Warn("lease released, but not on every node; their copies expire with the TTL",
				"key", l.key, "token", l.Token(), "error", err, "elapsed", time.Since(t0))
		default:
			l.log.Debug("lease keys deleted", "key", l.key, "token", l.Token(), "elapsed", time.Since(t0))
		}
		l.releaseErr = err
	})
}
