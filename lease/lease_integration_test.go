package lease

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/redlock"
)

// Integration tests against real redis-server processes. Waits are on
// events with generous deadlines, never fixed sleeps.

// startServers starts 5 real servers and returns them with a go-redis
// client each and a bootstrapped redlock.Client over them (NodeTimeout
// 200ms). Paused servers are resumed on cleanup, before the client closes,
// so that nothing waits on a frozen server.
func startServers(t *testing.T) (*redistest.Group, []redis.UniversalClient, *redlock.Client) {
	t.Helper()
	// Short socket timeouts and no retries (redistest.FastOptions):
	// requests stuck on a frozen server end soon after redlock stopped
	// waiting for them.
	rig := redistest.StartRig(t, 5, redistest.RigOptions{})
	c := newClient(t, redlock.Config{NodeTimeout: 200 * time.Millisecond}, rig.Nodes)
	t.Cleanup(rig.Heal)
	return rig.Group, rig.Nodes, c
}

// TestIntegrationPausedMajorityEndsLeaseBeforeValidity: with a majority of
// real servers frozen (SIGSTOP), refreshes time out, and Done closes at
// ValidUntil - SafetyMargin, before ValidUntil on the monotonic clock,
// whatever the frozen servers do. Once they continue, another holder takes
// over.
func TestIntegrationPausedMajorityEndsLeaseBeforeValidity(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real redis-server processes")
	}
	ctx := context.Background()
	g, nodes, c := startServers(t)

	cfg := Config{TTL: 2 * time.Second, RenewInterval: 500 * time.Millisecond, RetryInterval: 100 * time.Millisecond,
		SafetyMargin: 200 * time.Millisecond, ID: "first"}
	l := mustAcquire(t, ctx, c, "paused", cfg)
	first := l.ValidUntil()
	require.Eventually(t, func() bool { return l.ValidUntil().After(first) }, 5*time.Second, 5*time.Millisecond,
		"the lease refreshes")

	for i := range 3 {
		require.NoError(t, g.Server(i).Pause())
	}
	var ended time.Time
	select {
	case <-l.Context().Done():
		ended = time.Now()
	case <-time.After(2 * cfg.TTL):
		t.Fatalf("the lease did not end with a majority frozen (Held=%v, deadline in %s)", l.Held(), time.Until(l.deadline()))
	}
	require.ErrorIs(t, context.Cause(l.Context()), ErrLeaseLost)
	validUntil, deadline := l.ValidUntil(), l.deadline()
	assert.True(t, ended.Before(validUntil), "Done closed %s after ValidUntil", ended.Sub(validUntil))
	assert.False(t, ended.Before(deadline), "Done closed %s before ValidUntil - SafetyMargin", deadline.Sub(ended))
	assert.False(t, l.Held())
	t.Logf("Done closed %s after the deadline, %s before ValidUntil: %v", ended.Sub(deadline), validUntil.Sub(ended), context.Cause(l.Context()))

	// The keys were deleted in the background where servers answer.
	require.Equal(t, "release", quorumOp(l.Release(ctx)), "the frozen servers could not be reached")
	require.Eventually(t, func() bool {
		n, err := nodes[3].Exists(ctx, "paused").Result()
		m, err2 := nodes[4].Exists(ctx, "paused").Result()
		return err == nil && err2 == nil && n+m == 0
	}, 5*time.Second, 5*time.Millisecond, "the live servers still hold the key")

	// Once the servers continue, the key is free (expired on the servers'
	// clocks while they were frozen) and another holder takes over.
	for i := range 3 {
		require.NoError(t, g.Server(i).Resume())
	}
	cfg.ID = "second"
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	l2, err := Acquire(wait, c, "paused", cfg)
	require.NoError(t, err)
	defer l2.Release(ctx)
	assert.Greater(t, l2.Token(), l.Token())
	info, err := c.Inspect(ctx, "paused")
	require.NoError(t, err)
	assert.Equal(t, "second", info.ID)
}

// TestIntegrationMinorityDownKeepsLease: with one server killed (kill -9)
// and another frozen (SIGSTOP), three of five still answer, and the lease
// keeps refreshing on time (a refresh returns at the majority, without
// waiting for the frozen server) through many renew intervals.
func TestIntegrationMinorityDownKeepsLease(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real redis-server processes")
	}
	ctx := context.Background()
	g, nodes, c := startServers(t)
	cfg := Config{TTL: time.Second, RenewInterval: 200 * time.Millisecond, RetryInterval: 50 * time.Millisecond,
		SafetyMargin: 100 * time.Millisecond, ID: "minority"}
	l := mustAcquire(t, ctx, c, "minority", cfg)
	require.NoError(t, g.Server(0).Kill())
	require.NoError(t, g.Server(1).Pause())

	// Ten refreshes in a row, each seen as ValidUntil moving forward.
	const refreshes = 10
	last := l.ValidUntil()
	for k := range refreshes {
		select {
		case <-l.Context().Done():
			t.Fatalf("lease lost after %d refreshes with a minority down: %v", k, context.Cause(l.Context()))
		default:
		}
		require.Eventually(t, func() bool { return l.ValidUntil().After(last) }, cfg.TTL, time.Millisecond,
			"refresh %d did not come before the lease would end", k+1)
		last = l.ValidUntil()
		require.True(t, l.Held())
	}
	require.NoError(t, context.Cause(l.Context()))

	// Release returns once a majority deleted the keys; every server that
	// answers ends up without them.
	require.NoError(t, l.Release(ctx))
	require.ErrorIs(t, context.Cause(l.Context()), ErrReleased)
	for i := 2; i < 5; i++ {
		require.Eventually(t, func() bool {
			n, err := nodes[i].Exists(ctx, "minority").Result()
			return err == nil && n == 0
		}, 5*time.Second, 5*time.Millisecond, "server %d still holds the key", i)
	}
}
