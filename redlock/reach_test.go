package redlock

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/testnodes"
)

// What a Client last heard of its nodes' quarantine (redlockx.Client.Heard, read by
// the election's readiness check): New's start-up check, an acquisition,
// an inspection; a node is quarantined from the first answer that says so
// until one says it votes, and not after Bootstrap.
func TestHeardQuarantine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms, nodes := testnodes.MemMinis(t, 3)
		cfg := readinessCfg
		cfg.Logger = testLogger(t)
		c, err := New(context.Background(), cfg, nodes...)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		quarantined := func() (n int, left time.Duration) {
			for _, h := range c.Internal().Heard() {
				assert.False(t, h.Answered.IsZero())
				if h.Quarantined {
					n, left = n+1, max(left, h.Left)
				}
			}
			return n, left
		}
		n, left := quarantined()
		assert.Equal(t, 3, n, "fresh nodes, from New")
		assert.Equal(t, readinessMaxTTL, left)

		time.Sleep(time.Second)
		_, err = c.TryAcquire(t.Context(), "k", time.Second)
		require.ErrorIs(t, err, ErrNotAcquired)
		n, left = quarantined()
		assert.Equal(t, 3, n, "an acquisition's answers")
		assert.Equal(t, readinessMaxTTL-time.Second, left)

		// The end of the quarantine: the next call raises the floors
		// (fresh nodes), then a call that reads the markers sees votes.
		time.Sleep(readinessMaxTTL)
		_, _ = c.Inspect(t.Context(), "k")
		synctest.Wait()
		_, _ = c.Inspect(t.Context(), "k")
		n, _ = quarantined()
		assert.Zero(t, n, "the quarantine is over and the floors are raised")

		ms[1].FlushAll() // restarted empty
		_, _ = c.Inspect(t.Context(), "k")
		synctest.Wait()
		_, _ = c.Inspect(t.Context(), "k")
		n, left = quarantined()
		assert.Equal(t, 1, n, "a node that lost its marker, seen by the next pass")
		assert.Positive(t, left)

		require.NoError(t, c.Bootstrap(t.Context()))
		n, _ = quarantined()
		assert.Zero(t, n, "after Bootstrap")
	})
}
