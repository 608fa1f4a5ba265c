package lease

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/lockrule"
	"github.com/redlease/redlease/redlock"
)

// acquireMany acquires n leases key-0 ... key-(n-1) at the current
// instant, released on cleanup.
func acquireMany(t *testing.T, c *redlock.Client, n int, cfg Config) []*Lease {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger() // thousands of leases: no trace
	}
	ls := make([]*Lease, n)
	for i := range ls {
		ls[i] = mustAcquire(t, t.Context(), c, fmt.Sprintf("key-%d", i), cfg)
	}
	synctest.Wait()
	return ls
}

// Leases due together are refreshed together: one script call per node
// per MaxExtendBatch leases, each lease extended once.
func TestBatchedRefresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms, nodes := memNodes(t, 3)
		c := newClient(t, redlock.Config{NodeTimeout: 100 * time.Millisecond}, nodes)
		start := time.Now()
		const n = 300 // two batches: 256 + 44
		ls := acquireMany(t, c, n, timingConfig())
		scripts, extends := ms[0].Scripts(), ms[0].Extends()
		at(start.Add(tRenew))
		assert.Equal(t, scripts+2, ms[0].Scripts(), "one call per node per batch of at most %d", lockrule.MaxExtendBatch)
		assert.Equal(t, extends+n, ms[0].Extends(), "every lease extended once")
		validity := tTTL - drift(c, tTTL)
		for _, l := range ls {
			require.Equal(t, tRenew+validity, l.ValidUntil().Sub(start))
			require.True(t, l.Held())
		}
	})
}

// The deadline of each lease is its own timer: with the scheduler stalled
// (a starved process), Done closes at ValidUntil - SafetyMargin, not a
// moment later, and a refresh that runs once the scheduler wakes up does
// not revive the lease (docs/design.md S2, S4).
func TestStalledSchedulerDoesNotDelayLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stall := make(chan struct{}) // of the bubble: a goroutine blocked on it is durably blocked
		roundHook = func() { <-stall }
		defer func() { roundHook = nil }()
		ms, nodes := memNodes(t, 3)
		c := newClient(t, redlock.Config{NodeTimeout: 100 * time.Millisecond}, nodes)
		start := time.Now()
		ls := acquireMany(t, c, 10, timingConfig())
		deadline := ls[0].deadline()
		for _, l := range ls {
			require.Equal(t, deadline, l.deadline())
		}
		at(start.Add(tRenew)) // the scheduler takes the batch and stalls
		require.Equal(t, deadline, ls[0].deadline(), "not refreshed")
		at(deadline.Add(-time.Nanosecond))
		for _, l := range ls {
			require.True(t, l.Held())
			require.False(t, closed(l.Context().Done()))
		}
		at(deadline)
		for _, l := range ls {
			require.True(t, closed(l.Context().Done()), "Done must close at the deadline, with the scheduler stalled")
			require.False(t, l.Held())
			require.ErrorIs(t, context.Cause(l.Context()), ErrLeaseLost)
		}
		assert.Equal(t, tTTL-drift(c, tTTL)-tMargin, time.Since(start))
		for _, m := range ms { // released at once, not left to expire
			for i := range ls {
				assert.False(t, m.Exists(fmt.Sprintf("key-%d", i)))
			}
		}
		close(stall) // the late batch runs now: nothing comes back
		synctest.Wait()
		for _, l := range ls {
			require.False(t, l.Held())
			require.ErrorIs(t, context.Cause(l.Context()), ErrLeaseLost)
			require.Equal(t, deadline, l.deadline())
		}
		for _, m := range ms {
			for i := range ls {
				assert.False(t, m.Exists(fmt.Sprintf("key-%d", i)), "an extend re-created a key")
			}
		}
	})
}

// Overload: with a majority of nodes failing, every lease retries every
// RetryInterval (4x the steady rate), but the scheduler sends at most
// twice the steady rate of key extends; once the nodes heal, every lease
// is refreshed before its deadline (nearest deadline first) and traffic is
// back to the steady rate.
func TestRetriesBoundedThenSteady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms, nodes := memNodes(t, 3)
		c := newClient(t, redlock.Config{NodeTimeout: 100 * time.Millisecond}, nodes)
		start := time.Now()
		const n = 1000 // steady: n extends per RenewInterval per node
		ls := acquireMany(t, c, n, timingConfig())

		at(start.Add(tRenew / 2))
		ms[0].fail()
		ms[1].fail()
		healthy := ms[2]
		before := healthy.Extends()
		at(start.Add(tRenew + tRenew/2))
		half := healthy.Extends()
		at(start.Add(2 * tRenew)) // a second of failures and retries
		sent, late := healthy.Extends()-before, healthy.Extends()-half
		t.Logf("extends in a second of failures: %d, in its second half: %d (steady: %d per second)", sent, late, n)
		steady := n // per second (RenewInterval 1s)
		assert.LessOrEqual(t, sent, 2*steady+n, "retries beyond twice the steady rate (plus the bucket: one per lease)")
		assert.LessOrEqual(t, late, steady+lockrule.MaxExtendBatch, "bucket empty: twice the steady rate")
		assert.Greater(t, sent, steady, "failed refreshes are retried")
		for _, m := range ms[:2] {
			m.heal()
		}
		at(ls[0].deadline())
		for i, l := range ls {
			require.True(t, l.Held(), "lease %d lost", i)
		}
		// Within 2 TTL the traffic is back to one extend per lease per
		// RenewInterval.
		at(start.Add(2*tRenew + 2*tTTL))
		before = healthy.Extends()
		at(start.Add(3*tRenew + 2*tTTL))
		assert.InDelta(t, steady, healthy.Extends()-before, float64(steady)/10, "not back to steady")
		for i, l := range ls {
			require.True(t, l.Held(), "lease %d lost", i)
		}
	})
}

// A scheduler serves every lease of its client and stops with the last.
func TestSchedulerStopsWithLastLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, nodes := memNodes(t, 3)
		c := newClient(t, redlock.Config{NodeTimeout: 100 * time.Millisecond}, nodes)
		ls := acquireMany(t, c, 3, timingConfig())
		schedMu.Lock()
		s := schedulers[c]
		schedMu.Unlock()
		require.NotNil(t, s)
		for _, l := range ls {
			require.Same(t, s, l.sched)
		}
		for _, l := range ls {
			require.NoError(t, l.Release(context.Background()))
		}
		synctest.Wait()
		schedMu.Lock()
		_, ok := schedulers[c]
		schedMu.Unlock()
		assert.False(t, ok, "the scheduler stopped")
		// (synctest.Test fails if a goroutine of the bubble is left.)
	})
}
