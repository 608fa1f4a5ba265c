package lease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redlease/redlease/redlock"
)

// A lease is kept and ended by three parts, none of them a goroutine of
// its own:
//
//   - its client's scheduler (scheduler.go) refreshes it, batched with the
//     client's other leases, RenewInterval after the start of the last
//     successful acquire or refresh, and RetryInterval after the start of
//     a failed one (no jitter: leases that refresh together share calls);
//   - a refresh waits up to RetryInterval for a majority (or NodeTimeout
//     if longer: internal/redlockx.ExtendWait), never past the lock's
//     validity; a process that refreshes thousands of leases, or is short
//     of CPU, reads its replies late, and the nodes' yes still counts (the
//     new validity runs from the refresh's start);
//   - its deadline timer (expire, a time.AfterFunc) ends it at
//     ValidUntil - SafetyMargin, however late the scheduler or a refresh
//     in flight is: the end of a lease never waits for a reply or for the
//     scheduler (docs/design.md S2);
//   - a refresh that succeeds after the deadline does not bring the lease
//     back (S4): the deadline is checked and moved under one lock, the lock
//     Held reads it under;
//   - when the lease ends, for whatever reason (its own end, or the parent
//     context's, through a context.AfterFunc on the parent), ended runs
//     once, in a goroutine of its own: it takes the lease out of the scheduler, reports a
//     loss (reportLost, the one place every loss passes), and deletes the
//     keys on every node unless Release does that itself.

// setInflight records whether a refresh of the lease is in flight.
func (l *Lease) setInflight(b bool) {
	l.mu.Lock()
	l.inflight = b
	l.mu.Unlock()
}

// refreshed takes the result of the refresh that started at start, and
// returns when the next one is due, or the zero time when the lease has
// ended (it ends it when the refresh says so). On success it moves the
// lease's deadline to the lock's new one, unless the old deadline has
// passed or the lease has ended meanwhile: a late success does not revive
// a lease.
func (l *Lease) refreshed(start time.Time, err error) time.Time {
	vu := l.lock.ValidUntil()
	l.mu.Lock()
	l.inflight = false
	switch {
	case l.ctx.Err() != nil:
		l.mu.Unlock()
		return time.Time{}
	case err != nil:
		l.lastErr = err
		l.failures++
		failures := l.failures
		l.mu.Unlock()
		if final(err) {
			l.end(l.lost("refresh refused", err))
			return time.Time{}
		}
		next := start.Add(l.retry)
		l.log.Debug("refresh failed; retrying", "key", l.key, "error", err,
			"failures", failures, "retry_in", max(0, time.Until(next)), "left", time.Until(l.deadline()))
		return next
	case !time.Now().Before(l.deadlineLocked()):
		l.mu.Unlock()
		l.end(l.lost("a refresh succeeded only after ValidUntil - SafetyMargin", nil))
		return time.Time{}
	}
	l.validUntil = vu
	l.lastErr, l.failures = nil, 0
	d := l.deadlineLocked()
	l.timer.Reset(time.Until(d))
	l.mu.Unlock()
	l.log.Trace("refreshed", "key", l.key, "token", l.Token(), "validity", time.Until(d), "elapsed", time.Since(start))
	return start.Add(l.renew)
}

// expire is the deadline timer's function: it ends the lease at
// ValidUntil - SafetyMargin, and sets itself again if a refresh moved the
// deadline meanwhile.
func (l *Lease) expire() {
	l.mu.Lock()
	if l.ctx.Err() != nil {
		l.mu.Unlock()
		return
	}
	if left := time.Until(l.deadlineLocked()); left > 0 {
		l.timer.Reset(left)
		l.mu.Unlock()
		return
	}
	why := fmt.Sprintf("not refreshed before ValidUntil - SafetyMargin (%d failed refreshes in a row)", l.failures)
	if l.inflight {
		why += "; a refresh was still in flight"
	}
	last := l.lastErr
	l.mu.Unlock()
	l.end(l.lost(why, last))
}

// ended runs once the lease's context has ended, for whatever reason.
func (l *Lease) ended() {
	defer l.exited.Done()
	l.mu.Lock()
	l.timer.Stop()
	stop := l.stopParent
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
	l.sched.unschedule(l)
	err := context.Cause(l.ctx)
	switch {
	case errors.Is(err, ErrReleased):
		return // Release deletes the keys itself
	case errors.Is(err, ErrLeaseLost):
		l.reportLost(err)
	default:
		l.log.Debug("lease context ended; releasing", "key", l.key, "token", l.Token(), "error", err)
	}
	l.releaseKeys(l.ctx)
}

// reportLost is where every lost lease is reported, once: whatever ended
// it (its deadline, a majority saying the keys are no longer ours, a
// refresh that came too late), it passes here before its keys are deleted:
// the log, and the client's Hooks (redlock.EventLost).
func (l *Lease) reportLost(err error) {
	l.log.Warn("lease lost", "key", l.key, "token", l.Token(), "error", err)
	if h := l.client.Config().Hooks; h != nil {
		h(redlock.Event{Kind: redlock.EventLost, Key: l.key, Token: l.Token(), Err: err, Outcome: l.client.Internal().Outcome(err)})
	}
}

// lost returns the error a lost lease ends with.
func (l *Lease) lost(why string, last error) error {
	if last == nil {
		return fmt.Errorf("%w: %q: %s", ErrLeaseLost, l.key, why)
	}
	return fmt.Errorf("%w: %q: %s; last refresh: %w", ErrLeaseLost, l.key, why, last)
}

// final reports whether a failed refresh means that no later refresh can
// succeed: the lock is no longer held by redlock's own account, the client
// was closed, or a majority of nodes answered that the keys are no longer
// ours (expired, deleted, or taken). Timeouts, connection errors and
// quarantined nodes are worth a retry.
func final(err error) bool {
	if errors.Is(err, redlock.ErrNotHeld) || errors.Is(err, redlock.ErrClosed) || errors.Is(err, redlock.ErrInvalidArgument) {
		return true
	}
	var qe *redlock.QuorumError
	if !errors.As(err, &qe) {
		return false
	}
	no := 0
	for _, n := range qe.Nodes {
		if !n.Yes && !n.Quarantined && n.Err == nil { // a no: held by another value, or no longer ours
			no++
		}
	}
	return no >= qe.Need
}
