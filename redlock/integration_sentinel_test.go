package redlock_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/redlock"
)

// sentinelNodes is the README's Sentinel wiring: one FailoverClient per
// Sentinel group (a master and its replicas), one vote per group.
func sentinelNodes(sentinelAddrs []string, groups ...string) []redis.UniversalClient {
	var nodes []redis.UniversalClient
	for _, group := range groups {
		nodes = append(nodes, redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName:    group,
			SentinelAddrs: sentinelAddrs,
		}))
	}
	return nodes
}

// startSentinelGroups starts n groups of a master and a replica ("g0".."g<n-1>")
// watched by three sentinels, and returns the masters and the sentinels.
func startSentinelGroups(t *testing.T, n int) (*redistest.Group, *redistest.Sentinels) {
	g := redistest.Start(t, n)
	masters := map[string]string{}
	for i, s := range g.Servers() {
		redistest.StartReplica(t, s.Addr())
		masters[fmt.Sprintf("g%d", i)] = s.Addr()
	}
	return g, redistest.StartSentinels(t, 3, masters)
}

// Three FailoverClients over three Sentinel groups are three votes (New
// refused them: every FailoverClient has the address "FailoverClient"),
// named by position, and in errors by the master that answered too; two
// FailoverClients of one group are one server, refused by run_id.
func TestIntegrationSentinelGroups(t *testing.T) {
	ctx := context.Background()
	g, ss := startSentinelGroups(t, 3)
	nodes := sentinelNodes(ss.Addrs(), "g0", "g1", "g2")
	t.Cleanup(func() {
		for _, n := range nodes {
			_ = n.Close()
		}
	})
	c, err := redlock.New(ctx, redlock.Config{NodeTimeout: nodeTimeout}, nodes...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	assert.Equal(t, []string{"failover#0", "failover#1", "failover#2"}, c.Internal().Nodes(), "stable names")
	require.NoError(t, c.Bootstrap(ctx))
	l, err := c.TryAcquire(ctx, "sentinel", 5*time.Second)
	require.NoError(t, err)
	assert.Positive(t, l.Token())
	err = l.Release(ctx)
	require.NoError(t, err)

	twice := sentinelNodes(ss.Addrs(), "g0", "g1", "g0")
	t.Cleanup(func() {
		for _, n := range twice {
			_ = n.Close()
		}
	})
	_, err = redlock.New(ctx, redlock.Config{NodeTimeout: nodeTimeout}, twice...)
	require.ErrorIs(t, err, redlock.ErrInvalidArgument)
	assert.Contains(t, err.Error(), fmt.Sprintf("nodes failover#0@%s and failover#2@%s are the same server (run_id ", g.Addrs()[0], g.Addrs()[0]))
}
