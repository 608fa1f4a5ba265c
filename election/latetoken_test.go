package election

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// A standby that read a new term before its token was written back
// reports it with Token 0 (not known yet), then the same term again, once,
// with its token when a read shows it, as a Watch does (observer). Before,
// its EventLeaderChanged kept Token 0 for the whole term.
func TestLeaderChangedLateToken(t *testing.T) {
	ms, nodes := testnodes.Minis(t, 3)
	c := newClient(t, redlock.Config{NodeTimeout: 500 * time.Millisecond, Logger: testLogger(t)}, nodes)
	ctx := context.Background()
	a, err := lease.TryAcquire(ctx, c, "late", lease.Config{ID: "a", TTL: 3 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Release(ctx) })
	cfg := unitCfg(t, "s")
	e := newElector(t, c, "late", cfg)
	start(t, e)
	ev := waitEvent(t, e.Events(), 5*time.Second, kind(EventLeaderChanged))
	require.Equal(t, "a", ev.Leader.ID)

	// A new term whose token is not written back yet (the counters still
	// hold a's), lasting a while: the standby reads it on its next look.
	forged := "rl1:AAAAAAAAAAAAAAAAAAAAAA:id=b"
	for _, m := range ms {
		m.Set("late", forged)
		m.SetTTL("late", 3*time.Second)
	}
	ev = waitEvent(t, e.Events(), 5*time.Second, func(ev Event) bool { return ev.Leader.ID == "b" })
	require.Zero(t, ev.Leader.Token, "read before the write-back: not known yet, never a's token")

	written := strconv.FormatUint(a.Token()+1, 10)
	for _, m := range ms {
		m.Set("late:fence", written)
	}
	ev = waitEvent(t, e.Events(), 5*time.Second, kind(EventLeaderChanged))
	assert.Equal(t, forged, ev.Leader.Value, "the same term")
	assert.Equal(t, a.Token()+1, ev.Leader.Token)
}
