package security

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/internal/redlockx"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// aclRuleCluster is the rule of SECURITY.md for redlock.NewCluster: every
// key and notice channel of copy i carries the hash tag {rl<i>-<j>} (see
// internal/clusterkey.Tag), notices use SPUBLISH/SSUBSCRIBE in the copy's slot,
// and go-redis' cluster client reads the slot map (CLUSTER SLOTS) and
// follows ASK redirects during slot migrations (ASKING); it reads COMMAND
// (the commands' key positions) once, and logs every use when refused.
const aclRuleCluster = "+evalsha +eval +script|load +get +mget +set +incr +pexpire +pexpireat +pttl +del +hget +hmget +hset +time +info|server " +
	"+spublish +ssubscribe +ping +cluster|slots +command +asking ~{rl*}:app:* ~{rl*}:marker &{rl*}:app:*:notice"

// TestACLLeastPrivilegeCluster runs redlock and lease on a Redis Cluster
// through a user that has exactly aclRuleCluster (ACL rules are per
// server: the user is created on every node).
func TestACLLeastPrivilegeCluster(t *testing.T) {
	skipShort(t)
	ctx := context.Background()
	cl := redistest.StartCluster(t, 3, 0)
	args := append([]string{"reset", "on", ">" + password}, strings.Fields(aclRuleCluster)...)
	for _, s := range cl.Servers() {
		require.NoError(t, s.Client(t).ACLSetUser(ctx, "redlease", args...).Err())
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), Username: "redlease", Password: password})
	t.Cleanup(func() { _ = cc.Close() })

	logs, logger := newLogBuffer(t)
	c, err := redlock.NewCluster(ctx, redlock.Config{NodeTimeout: nodeTimeout, Logger: logger}, cc, 3)
	require.NoError(t, err)
	defer c.Close()
	assert.NotContains(t, logs.String(), "did not answer")
	require.NoError(t, c.Bootstrap(ctx))

	lockCycle(t, c, "app:lock")

	const key = "app:lease"
	sub, err := c.Internal().Subscribe(ctx, notice.Channel(key))
	require.NoError(t, err)
	defer sub.Close()
	// The subscriptions are in place once a published notice arrives.
	require.Eventually(t, func() bool {
		if _, err := c.Internal().Publish(ctx, notice.Channel(key), "ping"); err != nil {
			return false
		}
		select {
		case <-sub.C():
			return true
		default:
			return false
		}
	}, waitFor, 50*time.Millisecond)
	redlockx.Drain(sub)
	alice, err := lease.Acquire(ctx, c, key, lease.Config{TTL: 3 * time.Second, ID: "alice"})
	require.NoError(t, err)
	require.NoError(t, alice.Release(ctx))
	waitNotices(t, sub, notice.Message{Kind: notice.Released}.Encode(), c.Internal().Quorum())
}
