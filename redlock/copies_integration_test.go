package redlock_test

import (
	"context"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/hookstest"
	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/redlock"
)

// noSpare is the warning of a lock left on a bare majority.
const noSpare = "held on a bare majority, no spare"

// A lock whose copy is lost on one of 3 nodes (another value there) is
// still extended by the other two; the holder warns once,
// when it learns it, and Event.Spare falls from 1 to 0. Later extends
// neither warn again nor raise the count. Both paths: Lock.Extend, and
// ExtendAll (the batched refresh of leases) (#32 item 7).
func TestIntegrationLostCopyWarnsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real redis-server processes")
	}
	for _, batched := range []bool{false, true} {
		name := map[bool]string{false: "Extend", true: "ExtendAll"}[batched]
		t.Run(name, func(t *testing.T) { lostCopyWarnsOnce(t, batched) })
	}
}

// lostCopyWarnsOnce is TestIntegrationLostCopyWarnsOnce with Extend, or
// with ExtendAll (batched).
func lostCopyWarnsOnce(t *testing.T, batched bool) {
	ctx := context.Background()
	s := startServers(t, serversConfig{n: 3})
	logs := &testnodes.LogBuffer{T: t}
	h := &hookstest.Recorder{}
	c := s.locker(t, redlock.Config{NodeTimeout: nodeTimeout, Hooks: h.Observe,
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: logs})})
	key := testKey(t)
	lock, err := c.TryAcquire(ctx, key, waitFor)
	require.NoError(t, err)
	t.Cleanup(func() { _ = lock.Release(context.Background()) })
	extend := func() {
		t.Helper()
		if batched {
			require.NoError(t, c.ExtendAll(ctx, []*redlock.Lock{lock})[0])
		} else {
			require.NoError(t, lock.Extend(ctx, 0))
		}
	}
	// TryAcquire returns at a majority; the third node's request may still
	// be on its way (a loaded run's first extend found 2 copies).
	require.Eventually(t, lock.Settled, waitFor, pollTick)
	extend()
	spares := extendSpares(h, key)
	require.Equal(t, []int{1}, spares, "3 of 3 nodes hold it: one spare")

	// Node 2's copy replaced by another value: a copy the
	// restore cannot put back (it never overwrites a value).
	require.NoError(t, s.Direct[2].Set(ctx, key, "another", 0).Err())
	require.Eventually(t, func() bool {
		extend()
		sp := extendSpares(h, key)
		return sp[len(sp)-1] == 0
	}, waitFor, pollTick, "Event.Spare never fell to 0 with node 2's copy replaced")
	require.Eventually(t, func() bool { return logs.Count(noSpare) > 0 }, waitFor, pollTick, "no warning")
	for range 5 {
		extend()
	}
	assert.Equal(t, 1, logs.Count("[WARN]", noSpare, "key="+key, "holding=2", "nodes=3", "spare=0", "lost_on="),
		"one warning per change, not one per extend:\n%s", logs.String())
	assert.Equal(t, 1, logs.Count("lock copy lost"), logs.String())
	sp := extendSpares(h, key)
	assert.Equal(t, []int{0, 0, 0, 0, 0}, sp[len(sp)-5:], "another value is never overwritten")

	// A copy made again on node 2 (as a late acquire request
	// would) counts again, and is logged once too.
	require.NoError(t, s.Direct[2].Set(ctx, key, lock.Value(), waitFor).Err())
	require.Eventually(t, func() bool {
		extend()
		sp := extendSpares(h, key)
		return sp[len(sp)-1] == 1
	}, waitFor, pollTick, "Event.Spare never rose back to 1")
	require.Eventually(t, func() bool { return logs.Count("back on a node") > 0 }, waitFor, pollTick)
	extend()
	assert.Equal(t, 1, logs.Count("[INFO]", "lock copy back on a node", "holding=3", "spare=1"), logs.String())
}

// extendSpares is Event.Spare of every successful EventExtend of key, in
// order.
func extendSpares(h *hookstest.Recorder, key string) []int {
	var out []int
	for _, ev := range h.Of(redlock.EventExtend) {
		if ev.Key == key && ev.Err == nil {
			out = append(out, ev.Spare)
		}
	}
	return out
}
