package redlock_test

// Integration tests of the run-time configuration check (conf.go): a node
// that starts evicting keys while a client uses it stops counting.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/locktest"
	"github.com/redlease/redlease/redlock"
)

// checkBound is how long after a node's configuration changed every vote
// a client counts from it was checked after the change (conf.go: a check
// begun at most ConfStale before the vote), plus scheduling slack.
const checkBound = redlock.ConfStale + 500*time.Millisecond

// nodeErr returns node i's error in err's *QuorumError, or nil.
func nodeErr(t *testing.T, err error, i int) error {
	t.Helper()
	var qe *redlock.QuorumError
	require.True(t, errors.As(err, &qe), "not a QuorumError: %v", err)
	return qe.Nodes[i].Err
}

// TestIntegrationEvictingAtRuntime: two of three servers are switched to
// an evicting policy under a running client. Within the documented bound
// their votes stop counting, for acquisitions and for the extends of a lock
// held before the switch, and no acquire script is sent to them; once they
// are switched back, they count again.
func TestIntegrationEvictingAtRuntime(t *testing.T) {
	ctx := context.Background()
	cl := startServers(t, serversConfig{n: 3})
	c := cl.locker(t, redlock.Config{NodeTimeout: nodeTimeout})
	held, err := c.TryAcquire(ctx, testKey(t)+":held", 20*time.Second)
	require.NoError(t, err)

	switched := time.Now()
	for _, s := range cl.Direct[:2] {
		require.NoError(t, s.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err())
	}
	t.Cleanup(func() {
		for _, s := range cl.Direct[:2] {
			_ = s.ConfigSet(context.Background(), "maxmemory-policy", "noeviction").Err()
		}
	})

	last := waitEvictingRefused(t, c)
	t.Logf("refused %s after the switch: %v", time.Since(switched).Round(time.Millisecond), last)
	assert.ErrorContains(t, nodeErr(t, last, 0), "maxmemory-policy allkeys-lru")
	assert.ErrorContains(t, nodeErr(t, last, 0), cl.Server(0).Addr())

	// From now on no acquire reaches them, and extends do not count them.
	key := testKey(t) + ":after"
	_, err = c.TryAcquire(ctx, key, time.Second)
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	assert.Equal(t, []string{"", ""}, cl.Values(key, 0, 1), "an acquire script reached a refused node")
	err = held.Extend(ctx, 0)
	require.ErrorIs(t, err, redlock.ErrNotExtended)
	assert.ErrorContains(t, err, "maxmemory-policy allkeys-lru")
	in, err := c.Inspect(ctx, testKey(t)+":held")
	require.ErrorIs(t, err, redlock.ErrNoHolder, "an inspection does not count them either")
	require.NotNil(t, in)

	// Switched back: they count again within the bound.
	for _, s := range cl.Direct[:2] {
		require.NoError(t, s.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	}
	require.Eventually(t, func() bool {
		l, err := c.TryAcquire(ctx, testKey(t)+":again", time.Second)
		if err != nil {
			return false
		}
		_ = l.Release(ctx)
		return true
	}, checkBound, 10*time.Millisecond, "the nodes do not count again after noeviction")
}

// waitEvictingRefused waits until nodes 0 and 1 refuse c's acquisitions
// as evicting; it returns the last refusal.
func waitEvictingRefused(t *testing.T, c *redlock.Client) error {
	ctx := context.Background()
	// Refused at the latest after the bound; checked by acquiring (each
	// attempt a new key, so that no leftover blocks the next).
	var last error
	refused := func() bool {
		key := testKey(t) + ":" + time.Now().Format("150405.000000000")
		l, err := c.TryAcquire(ctx, key, time.Second)
		if err == nil {
			_ = l.Release(ctx)
			return false
		}
		last = err
		for i := range 2 {
			if e := nodeErr(t, err, i); e == nil || !errors.Is(e, redlock.ErrInvalidArgument) {
				return false
			}
		}
		return true
	}
	require.Eventually(t, refused, checkBound, 10*time.Millisecond, "the evicting nodes still count: %v", last)
	return last
}

// TestIntegrationEvictingNodeBackFromDown: a node that was down when the
// client started, and comes back evicting, is refused before its first
// vote counts.
func TestIntegrationEvictingNodeBackFromDown(t *testing.T) {
	ctx := context.Background()
	cl := startServers(t, serversConfig{n: 3})
	down := cl.Server(2)
	require.NoError(t, down.Kill())
	// Quarantine off: the restarted node votes at once unless refused.
	c := locktest.New(t, redlock.Config{NodeTimeout: nodeTimeout, DisableQuarantine: true}, cl.Nodes, false)
	t.Cleanup(cl.Heal)

	require.NoError(t, down.Restart(true))
	require.NoError(t, cl.Direct[2].ConfigSet(ctx, "maxmemory-policy", "volatile-lru").Err())
	// Server 0 holds another value: node 2's yes would decide.
	require.NoError(t, cl.Direct[0].Set(ctx, testKey(t), "someone else", time.Minute).Err())

	_, err := c.TryAcquire(ctx, testKey(t), time.Second)
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	e := nodeErr(t, err, 2)
	require.ErrorIs(t, e, redlock.ErrInvalidArgument, "node 2 counted before its configuration was checked")
	assert.ErrorContains(t, e, "maxmemory-policy volatile-lru")
	assert.Equal(t, []string{""}, cl.Values(testKey(t), 2), "the acquire script reached the refused node")
}
