package lease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redlease/redlease/redlock"
)

// The refresh goroutine (one per lease) keeps the lease and ends it:
//
//   - it refreshes (Lock.Extend) RenewInterval after the start of the last
//     successful acquire or refresh, and RetryInterval after the start of
//     a failed one (no jitter: leases that refresh together share
//     pipelines, which costs less than spreading them out);
//   - a refresh waits up to RetryInterval for a majority (or NodeTimeout
//     if longer: redlock.WithExtendTimeout), never past the lock's
//     validity; a process that refreshes thousands of leases, or is
//     short of CPU, reads its replies late, and the nodes' yes still counts
//     (the new validity runs from the refresh's start);
//   - the extend runs in a goroutine of its own, so that the deadline timer
//     fires on time while a request is in flight: the end of a lease never
//     waits for a reply (DESIGN S2);
//   - at ValidUntil - SafetyMargin the lease is lost, as soon as a majority
//     says the keys are no longer ours, or when the client was closed;
//   - a refresh that succeeds after the deadline does not bring the lease
//     back (S4): the deadline is checked and moved under one lock, the lock
//     Held reads it under.
//
// When the lease ended for any reason but Release, the goroutine deletes the
// keys on every node before it returns (Release does that itself).

// extendResult is the outcome of one refresh.
type extendResult struct {
	start time.Time // when the refresh started
	err   error
}

// run is the refresh goroutine.
func (l *Lease) run() {
	defer close(l.exited)
	l.end(l.refreshLoop())
	err := l.Err()
	switch {
	case errors.Is(err, ErrReleased):
		return // Release deletes the keys itself
	case errors.Is(err, ErrLeaseLost):
		l.log.Warn("lease lost", "key", l.key, "token", l.Token(), "error", err)
		l.reportLost(err)
	default:
		l.log.Debug("lease context ended; releasing", "key", l.key, "token", l.Token(), "error", err)
	}
	l.releaseKeys(l.ctx)
}

// refreshLoop keeps the lease until it ends and returns why.
func (l *Lease) refreshLoop() error {
	deadline := time.NewTimer(time.Until(l.Deadline()))
	defer deadline.Stop()
	next := time.NewTimer(time.Until(l.lock.AcquiredAt().Add(l.cfg.RenewInterval)))
	defer next.Stop()

	var (
		inflight <-chan extendResult // nil when no refresh is running
		lastErr  error               // of the last failed refresh, nil after a success
		failures int                 // failed refreshes in a row
	)
	for {
		tick := next.C
		if inflight != nil {
			tick = nil // one refresh at a time
		}
		select {
		case <-l.ctx.Done():
			return context.Cause(l.ctx)

		case <-deadline.C:
			why := fmt.Sprintf("not refreshed before ValidUntil - SafetyMargin (%d failed refreshes in a row)", failures)
			if inflight != nil {
				why += "; a refresh was still in flight"
			}
			return l.lost(why, lastErr)

		case <-tick:
			inflight = l.extend(l.refreshWait())

		case r := <-inflight:
			inflight = nil
			if r.err != nil {
				lastErr = r.err
				failures++
				if final(r.err) {
					return l.lost("refresh refused", r.err)
				}
				retryIn := time.Until(r.start.Add(l.cfg.RetryInterval))
				l.log.Debug("refresh failed; retrying", "key", l.key, "error", r.err,
					"failures", failures, "retry_in", max(0, retryIn), "left", time.Until(l.Deadline()))
				next.Reset(retryIn)
				continue
			}
			d, err := l.refreshed()
			if err != nil {
				return err
			}
			l.log.Trace("refreshed", "key", l.key, "token", l.Token(), "validity", time.Until(d), "elapsed", time.Since(r.start))
			lastErr, failures = nil, 0
			deadline.Reset(time.Until(d))
			next.Reset(time.Until(r.start.Add(l.cfg.RenewInterval)))
		}
	}
}

// refreshWait is how long one refresh may wait for a majority: the longer
// of RetryInterval and the client's NodeTimeout, and never past the lock's
// validity (an Extend that ends after it fails anyway).
func (l *Lease) refreshWait() time.Duration {
	return min(max(l.cfg.RetryInterval, l.client.Config().NodeTimeout), time.Until(l.lock.ValidUntil()))
}

// extend starts one refresh in a tracked goroutine and returns where its
// result will be. The refresh runs under the lease's context, so it is cut
// short when the lease ends, and its requests wait up to wait for a
// majority.
func (l *Lease) extend(wait time.Duration) <-chan extendResult {
	ch := make(chan extendResult, 1) // never blocks the sender
	start := time.Now()
	l.wg.Go(func() {
		ch <- extendResult{start: start, err: l.lock.Extend(l.ctx, 0, redlock.WithExtendTimeout(wait))}
	})
	return ch
}

// refreshed moves the lease's deadline to the lock's new one, unless the
// old deadline has passed or the lease has ended meanwhile: a late success
// does not revive a lease. It returns the new deadline, or why the lease
// ended.
func (l *Lease) refreshed() (time.Time, error) {
	vu := l.lock.ValidUntil()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx.Err() != nil {
		return time.Time{}, context.Cause(l.ctx)
	}
	if !time.Now().Before(l.deadlineLocked()) {
		return time.Time{}, l.lost("a refresh succeeded only after ValidUntil - SafetyMargin", nil)
	}
	l.validUntil = vu
	return l.deadlineLocked(), nil
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
		if n.Vote == redlock.VoteNo {
			no++
		}
	}
	return no >= qe.Need
}
