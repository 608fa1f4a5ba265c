package redlock

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/redlockx"
	"github.com/redlease/redlease/internal/testing/redistest"
)

// TestStragglerReleasePublishesNotice: a lock released while its acquire
// request to one node is still running leaves that node's copy to the
// request; when the request grants it, the copy is deleted with the
// release notice, so that a waiter subscribed on that node hears of the
// release too (it was deleted silently: seen as a waiter that heard the
// release from 2 of 3 nodes).
func TestStragglerReleasePublishesNotice(t *testing.T) {
	if testing.Short() {
		t.Skip("real redis-servers: not in -short")
	}
	rig := redistest.StartRig(t, 3, redistest.RigOptions{})
	c := closeClient(t, rig, "New")
	const channel, msg = "straggler/notice", "released"
	sub := rig.Server(0).Client(t).Subscribe(context.Background(), channel)
	t.Cleanup(func() { _ = sub.Close() })
	_, err := sub.Receive(context.Background()) // the subscription's confirmation
	require.NoError(t, err)

	require.NoError(t, rig.Server(0).Pause())
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			_ = rig.Server(0).Resume()
		}
	})
	ctx := context.Background()
	key := "straggler:notice"
	l, err := c.Acquire(ctx, key, 10*time.Second, redlockx.ReleaseNotice(channel, msg))
	require.NoError(t, err, "nodes 1 and 2 are a majority")
	require.NoError(t, l.Release(ctx), "deleted on nodes 1 and 2; node 0's request is still running")
	require.NoError(t, rig.Server(0).Resume())
	resumed = true

	receive(t, sub, msg, "node 0's copy was deleted without the release notice")
	require.Eventually(t, func() bool { return rig.Values(key, 0)[0] == "" }, 10*time.Second, 5*time.Millisecond,
		"the late grant on node 0 is released")
}
