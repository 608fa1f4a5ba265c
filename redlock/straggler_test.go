package redlock

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testnodes"
)

// TestLateGrantAboveTokenDeleted: a node whose grant comes after the
// acquisition returned, with a counter above the token handed out (failed
// attempts had raised it), would make a majority read report its counter;
// the acquisition deletes that copy, so every read reports the token
// (docs/design.md §4.4).
func TestLateGrantAboveTokenDeleted(t *testing.T) {
	ctx := context.Background()
	ms, nodes := testnodes.Minis(t, 3)
	gate := &AcquireGate{}
	nodes[2].AddHook(gate)
	c := newClient(t, Config{NodeTimeout: 5 * time.Second}, nodes)
	require.NoError(t, ms[0].Set("k:fence", "41"))
	require.NoError(t, ms[1].Set("k:fence", "41"))
	require.NoError(t, ms[2].Set("k:fence", "50"))

	open := gate.Hold()
	l, err := c.TryAcquire(ctx, "k", 20*time.Second)
	require.NoError(t, err)
	assert.Equal(t, uint64(42), l.Token(), "nodes 0 and 1 agree: the fast path")
	open() // node 2 grants now: 51, above the token
	require.Eventually(t, func() bool { v, _ := ms[2].Get("k:fence"); return v == "51" }, 5*time.Second, time.Millisecond,
		"node 2 granted late")
	require.Eventually(t, func() bool { return !ms[2].Exists("k") }, 5*time.Second, time.Millisecond,
		"the late copy above the token is deleted")
	in, err := c.Inspect(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, l.Token(), in.Token)
	require.NoError(t, l.Extend(ctx, 0), "the token's majority holds the lock")
	_, err = l.Release(ctx)
	require.NoError(t, err)
}
