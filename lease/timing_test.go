package lease

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/lockrule"
	"github.com/redlease/redlease/redlock"
)

// The timing rules, checked on the fake clock of testing/synctest: nodes are
// in-memory miniredis (net.Pipe), so requests take no time and every
// instant below is exact.

const (
	tTTL    = 3 * time.Second
	tRenew  = time.Second
	tRetry  = 200 * time.Millisecond
	tMargin = 150 * time.Millisecond
)

func timingConfig() Config {
	return Config{TTL: tTTL, RenewInterval: tRenew, RetryInterval: tRetry, SafetyMargin: tMargin, ID: "timing"}
}

// drift is redlock's drift allowance for ttl on client c.
func drift(c *redlock.Client, ttl time.Duration) time.Duration {
	return lockrule.Drift(ttl, c.Config().DriftFactor)
}

func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }

// settledAcquire acquires key and waits until the requests the acquisition
// left in flight (to nodes past the majority) have landed, so that a test
// that changes a node next does not race with them.
func settledAcquire(t *testing.T, c *redlock.Client, key string, cfg Config) *Lease {
	t.Helper()
	l := mustAcquire(t, t.Context(), c, key, cfg)
	synctest.Wait()
	return l
}

// at sleeps until t and lets every goroutine of the bubble settle.
func at(t time.Time) {
	sleepUntil(t)
	synctest.Wait()
}

func TestRenewSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, nodes := memNodes(t, 3)
		c := newClient(t, redlock.Config{NodeTimeout: 100 * time.Millisecond}, nodes)
		start := time.Now()
		l := settledAcquire(t, c, "renew", timingConfig())
		validity := tTTL - drift(c, tTTL)
		assert.Equal(t, validity, l.ValidUntil().Sub(start))
		assert.Equal(t, validity-tMargin, l.deadline().Sub(start))

		for k := 1; k <= 10; k++ {
			renewAt := start.Add(time.Duration(k) * tRenew)
			at(renewAt.Add(-time.Millisecond))
			require.Equal(t, time.Duration(k-1)*tRenew+validity, l.ValidUntil().Sub(start), "refresh %d came early", k)
			at(renewAt)
			require.Equal(t, time.Duration(k)*tRenew+validity, l.ValidUntil().Sub(start), "refresh %d not at %s", k, renewAt.Sub(start))
			require.True(t, l.Held())
		}
		require.NoError(t, context.Cause(l.Context()))
	})
}

func TestRetryEveryRetryIntervalThenLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms, nodes := memNodes(t, 3)
		c := newClient(t, redlock.Config{NodeTimeout: 100 * time.Millisecond}, nodes)
		start := time.Now()
		l := settledAcquire(t, c, "retry", timingConfig())
		deadline := l.deadline()

		at(start.Add(tRenew / 2))
		ms[0].fail()
		ms[1].fail() // a majority fails: no refresh can succeed
		healthy := ms[2]

		// Refresh at RenewInterval, then retries every RetryInterval, each
		// one request to the healthy node, until the deadline.
		attempt := start.Add(tRenew)
		n := 0
		for ; attempt.Before(deadline); attempt = attempt.Add(tRetry) {
			at(attempt.Add(-time.Millisecond))
			before := healthy.Scripts()
			at(attempt)
			require.Equal(t, before+1, healthy.Scripts(), "no refresh at %s", attempt.Sub(start))
			n++
			require.True(t, l.Held())
			require.False(t, closed(l.Context().Done()))
		}
		assert.Equal(t, 10, n, "1 refresh and 9 retries fit before the deadline")

		// The lease ends at ValidUntil - SafetyMargin, not a moment later.
		at(deadline.Add(-time.Nanosecond))
		require.True(t, l.Held())
		require.False(t, closed(l.Context().Done()))
		require.NoError(t, context.Cause(l.Context()))
		at(deadline)
		require.False(t, l.Held())
		require.True(t, closed(l.Context().Done()), "Done must close at ValidUntil - SafetyMargin")
		assert.Equal(t, tTTL-drift(c, tTTL)-tMargin, time.Since(start))
		require.ErrorIs(t, context.Cause(l.Context()), ErrLeaseLost)
		require.Equal(t, "extend", quorumOp(context.Cause(l.Context())), "Err wraps the last refresh error")
		assert.Contains(t, context.Cause(l.Context()).Error(), "10 failed refreshes")
		assert.Equal(t, context.Cause(l.Context()), context.Cause(l.Context()))
		assert.Equal(t, deadline, l.deadline(), "the deadline did not move")

		// The keys were released in the background where nodes answer.
		assert.False(t, healthy.Exists("retry"))
		// Release after loss reports the nodes it could not reach; Err stays.
		require.Equal(t, "release", quorumOp(l.Release(context.Background())))
		require.ErrorIs(t, context.Cause(l.Context()), ErrLeaseLost)
	})
}

func TestInFlightRefreshDoesNotDelayLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms, nodes := memNodes(t, 3)
		// NodeTimeout 1s: a refresh to hung nodes is in flight for 1s.
		c := newClient(t, redlock.Config{NodeTimeout: time.Second}, nodes)
		cfg := timingConfig()
		cfg.RenewInterval = 2 * time.Second
		start := time.Now()
		l := settledAcquire(t, c, "inflight", cfg)
		deadline := l.deadline()

		at(start.Add(time.Second))
		ms[0].hang()
		ms[1].hang()
		at(start.Add(cfg.RenewInterval)) // the refresh starts and hangs until start+3s
		require.True(t, l.Held())
		at(deadline.Add(-time.Nanosecond))
		require.False(t, closed(l.Context().Done()))
		at(deadline)
		require.True(t, closed(l.Context().Done()), "the deadline must not wait for the refresh in flight")
		require.Less(t, time.Since(start), cfg.RenewInterval+time.Second)
		require.ErrorIs(t, context.Cause(l.Context()), ErrLeaseLost)
		assert.Contains(t, context.Cause(l.Context()).Error(), "a refresh was still in flight")
	})
}

func TestLateRefreshDoesNotRevive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms, nodes := memNodes(t, 3)
		c := newClient(t, redlock.Config{NodeTimeout: time.Second}, nodes)
		cfg := timingConfig()
		cfg.RenewInterval = 2 * time.Second
		l := settledAcquire(t, c, "late", cfg)
		deadline, validUntil := l.deadline(), l.ValidUntil()

		ms[0].hang()
		ms[1].hang()
		// The hung nodes answer yes at the very instant of the deadline:
		// the refresh succeeds on every node, too late.
		go func() {
			sleepUntil(deadline)
			ms[0].heal()
			ms[1].heal()
		}()
		at(deadline)
		require.True(t, closed(l.Context().Done()))
		for i, m := range ms { // released at once, not left to expire
			assert.False(t, m.Exists("late"), "node %d still holds the key", i)
		}
		at(deadline.Add(tTTL))
		require.False(t, l.Held())
		require.ErrorIs(t, context.Cause(l.Context()), ErrLeaseLost)
		assert.Equal(t, validUntil, l.ValidUntil(), "a late refresh must not move the deadline")
	})
}

func TestMinorityDownKeepsLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms, nodes := memNodes(t, 5)
		c := newClient(t, redlock.Config{NodeTimeout: 100 * time.Millisecond}, nodes)
		start := time.Now()
		l := settledAcquire(t, c, "minority", timingConfig())
		ms[0].fail() // one node answers errors,
		ms[4].hang() // another never answers: 3 of 5 still refresh
		for k := 1; k <= 30; k++ {
			at(start.Add(time.Duration(k) * tTTL / 3))
			require.True(t, l.Held(), "lost after %s", time.Since(start))
		}
		assert.Greater(t, l.ValidUntil().Sub(start), 30*tTTL/3)
		// Three of five delete: nil, or (depending on how long redlock waits
		// for the others) the nodes that could not be reached.
		if err := l.Release(context.Background()); err != nil {
			require.Equal(t, "release", quorumOp(err))
		}
		require.ErrorIs(t, context.Cause(l.Context()), ErrReleased)
		synctest.Wait()
		for _, m := range ms[1:4] {
			assert.False(t, m.Exists("minority"))
		}
	})
}

func TestMajorityNoLosesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms, nodes := memNodes(t, 3)
		c := newClient(t, redlock.Config{NodeTimeout: 100 * time.Millisecond}, nodes)
		start := time.Now()
		l := settledAcquire(t, c, "gone", timingConfig())
		ms[0].Del("gone") // e.g. FLUSHALL, or an operator's DEL
		ms[1].Del("gone")
		at(start.Add(tRenew))
		require.True(t, closed(l.Context().Done()), "a majority saying 'not yours' ends the lease at the next refresh")
		require.ErrorIs(t, context.Cause(l.Context()), ErrLeaseLost)
		require.Equal(t, "extend", quorumOp(context.Cause(l.Context())))
		assert.Contains(t, context.Cause(l.Context()).Error(), "refused")
		require.NoError(t, l.Release(context.Background()), "release after loss")
		require.ErrorIs(t, context.Cause(l.Context()), ErrLeaseLost)
		synctest.Wait()
		assert.False(t, ms[2].Exists("gone"))
	})
}

func TestContextCancelReleases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms, nodes := memNodes(t, 3)
		c := newClient(t, redlock.Config{NodeTimeout: 100 * time.Millisecond}, nodes)
		ctx, cancel := context.WithCancelCause(t.Context())
		l := mustAcquire(t, ctx, c, "bound", timingConfig())
		synctest.Wait()
		cause := context.Canceled
		stop := testCause("shutting down")
		cancel(stop)
		<-l.Context().Done()
		require.ErrorIs(t, context.Cause(l.Context()), stop)
		require.NotErrorIs(t, context.Cause(l.Context()), cause, "Err is the cause, not ctx.Err()")
		require.Equal(t, context.Cause(l.Context()), context.Cause(l.Context()))
		require.False(t, l.Held())
		require.NoError(t, l.Release(context.Background()))
		require.ErrorIs(t, context.Cause(l.Context()), stop, "Release after the end keeps the reason")
		synctest.Wait()
		for _, m := range ms {
			assert.False(t, m.Exists("bound"))
		}
		// Free for the next holder at once.
		l2 := settledAcquire(t, c, "bound", timingConfig())
		require.True(t, l2.Held())
		require.Greater(t, l2.Token(), l.Token())
	})
}

type testCause string

func (e testCause) Error() string { return string(e) }

func TestReleaseWakesWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, nodes := memNodes(t, 3)
		c := newClient(t, redlock.Config{NodeTimeout: 100 * time.Millisecond}, nodes)
		cfg := timingConfig()
		l := settledAcquire(t, c, "handover", cfg)

		cfg.ID = "waiter"
		cfg.RetryDelay = time.Hour // polling would take at least 30 minutes
		type result struct {
			l   *Lease
			err error
			at  time.Time
		}
		got := make(chan result, 1)
		go func() {
			l2, err := Acquire(t.Context(), c, "handover", cfg)
			got <- result{l2, err, time.Now()}
		}()
		synctest.Wait() // the waiter has subscribed and sleeps
		time.Sleep(time.Second)
		released := time.Now()
		require.NoError(t, l.Release(context.Background()))
		r := <-got
		require.NoError(t, r.err)
		defer r.l.Release(context.Background())
		assert.Equal(t, released, r.at, "the release notice wakes the waiter at once")
		assert.Equal(t, "waiter", r.l.Holder().ID)
		require.NoError(t, context.Cause(r.l.Context()))
	})
}

func TestAcquireContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, nodes := memNodes(t, 3)
		c := newClient(t, redlock.Config{NodeTimeout: 100 * time.Millisecond}, nodes)
		settledAcquire(t, c, "busy", timingConfig())

		_, err := TryAcquire(t.Context(), c, "busy", timingConfig())
		require.ErrorIs(t, err, redlock.ErrNotAcquired)

		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		start := time.Now()
		_, err = Acquire(ctx, c, "busy", timingConfig())
		require.ErrorIs(t, err, redlock.ErrNotAcquired)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		var qe *redlock.QuorumError
		require.ErrorAs(t, err, &qe, "the last attempt's answers are in the error")
		assert.Equal(t, 2*time.Second, time.Since(start))
	})
}

// A refresh whose majority answers after NodeTimeout, but within
// RetryInterval, succeeds: the replies of a busy process come late, and a
// late yes is as good as a prompt one (the validity runs from the start).
func TestRefreshWaitsPastNodeTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms, nodes := memNodes(t, 3)
		const nodeTimeout = 50 * time.Millisecond
		c := newClient(t, redlock.Config{NodeTimeout: nodeTimeout}, nodes)
		start := time.Now()
		l := settledAcquire(t, c, "late-yes", timingConfig())
		validity := tTTL - drift(c, tTTL)

		at(start.Add(tRenew / 2))
		ms[0].hang()
		ms[1].hang()
		scripts := ms[2].Scripts()
		renewAt := start.Add(tRenew)
		go func() {
			sleepUntil(renewAt.Add(3 * nodeTimeout)) // past NodeTimeout, before RetryInterval
			ms[0].heal()
			ms[1].heal()
		}()
		at(renewAt.Add(3 * nodeTimeout))
		require.Equal(t, tRenew+validity, l.ValidUntil().Sub(start),
			"the refresh that started at RenewInterval counts, from its start")
		assert.Equal(t, scripts+1, ms[2].Scripts(), "one refresh, not a retry")
		require.True(t, l.Held())

		// With every node hung, a refresh gives up after RetryInterval
		// (not NodeTimeout), and the next starts then.
		for _, m := range ms {
			m.hang()
		}
		next := renewAt.Add(tRenew)
		before := ms[2].Scripts()
		at(next)
		require.Equal(t, before+1, ms[2].Scripts())
		at(next.Add(tRetry - time.Millisecond))
		require.Equal(t, before+1, ms[2].Scripts(), "still waiting for the first attempt")
		at(next.Add(tRetry))
		require.Equal(t, before+2, ms[2].Scripts(), "the retry starts when the first attempt's wait ends")
		for _, m := range ms {
			m.heal()
		}
		synctest.Wait()
		require.NoError(t, context.Cause(l.Context()))
		require.True(t, l.Held())
	})
}

// quorumOp is the Op of the *redlock.QuorumError in err's chain ("extend":
// a refresh that left the lease's deadline as it was; "release": nodes
// not reached by a release), or "" when there is none.
func quorumOp(err error) string {
	if qe, ok := errors.AsType[*redlock.QuorumError](err); ok {
		return qe.Op
	}
	return ""
}
