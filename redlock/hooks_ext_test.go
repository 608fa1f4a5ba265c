package redlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/hookstest"
	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/redlock"
)

// Every acquisition attempt, extension, release and node error is
// reported where it happens, with its key, token, duration and error.
func TestHooksEvents(t *testing.T) {
	ctx := context.Background()
	ms, nodes := testnodes.Minis(t, 3)
	h := &hookstest.Recorder{}
	c, err := redlock.New(ctx, redlock.Config{NodeTimeout: 200 * time.Millisecond, Hooks: h.Observe,
		Logger: testnodes.Logger(t, 0)}, nodes...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.Bootstrap(ctx))

	l, err := c.Acquire(ctx, "hooks", 2*time.Second)
	require.NoError(t, err)
	require.NoError(t, l.Extend(ctx, 0))
	_, err = c.TryAcquire(ctx, "hooks", 2*time.Second)
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	err = l.Release(ctx)
	require.NoError(t, err)
	err = l.Release(ctx) // twice: not held
	require.ErrorIs(t, err, redlock.ErrNotHeld)

	checkQuarantineEvents(t, h)
	checkOperationEvents(t, h, l)
	checkNodeErrorEvents(t, h, c, ms)
}

// checkQuarantineEvents: New saw the brand-new nodes quarantined (no
// marker yet); after Bootstrap, the acquisition's answers show them vote.
func checkQuarantineEvents(t *testing.T, h *hookstest.Recorder) {
	q := h.Of(redlock.EventQuarantine)
	require.Len(t, q, 6, "%v", q)
	for i, ev := range q {
		assert.NotEmpty(t, ev.Node)
		if i < 3 {
			assert.ErrorContains(t, ev.Err, "quarantined", "begun")
			assert.Equal(t, "error", ev.Outcome)
			assert.Positive(t, ev.Duration, "the quarantine left")
		} else {
			assert.NoError(t, ev.Err, "over: it votes")
			assert.Equal(t, "ok", ev.Outcome)
		}
	}
}

// checkOperationEvents: one event per operation of l's, in order, with
// its outcome, key and token.
func checkOperationEvents(t *testing.T, h *hookstest.Recorder, l *redlock.Lock) {
	var evs []redlock.Event
	for _, ev := range h.Events() {
		if ev.Kind != redlock.EventQuarantine {
			evs = append(evs, ev)
		}
	}
	require.Len(t, evs, 5, "%v", evs)
	for i, want := range []struct {
		kind    redlock.EventKind
		outcome string
	}{
		{redlock.EventAcquire, "ok"}, {redlock.EventExtend, "ok"}, {redlock.EventAcquire, "busy"},
		{redlock.EventRelease, "ok"}, {redlock.EventRelease, "error"},
	} {
		assert.Equal(t, want.kind, evs[i].Kind, "event %d", i)
		assert.Equal(t, want.outcome, evs[i].Outcome, "event %d: %v", i, evs[i].Err)
		assert.Equal(t, "hooks", evs[i].Key)
	}
	assert.Equal(t, l.Token(), evs[0].Token)
	assert.Equal(t, l.Token(), evs[1].Token)
	assert.Zero(t, evs[2].Token, "not acquired: no token")
	assert.Positive(t, evs[0].Duration)
	assert.ErrorIs(t, evs[4].Err, redlock.ErrNotHeld)
}

// checkNodeErrorEvents: a node gone: its error is reported, named, after
// the call that returned at quorum. (The release may skip the node while
// the acquisition's request to it still runs: one error at least.)
func checkNodeErrorEvents(t *testing.T, h *hookstest.Recorder, c *redlock.Client, ms []*miniredis.Miniredis) {
	ctx := context.Background()
	ms[1].Close()
	l, err := c.Acquire(ctx, "hooks2", 2*time.Second)
	require.NoError(t, err)
	_ = l.Release(ctx)
	for len(h.Of(redlock.EventNodeError)) < 1 {
		select {
		case <-h.Changed():
		case <-time.After(10 * time.Second):
			t.Fatalf("node errors not reported: %v", h.Events())
		}
	}
	for _, ev := range h.Of(redlock.EventNodeError) {
		assert.Equal(t, c.Internal().Nodes()[1], ev.Node)
		assert.Error(t, ev.Err)
		assert.Empty(t, ev.Key)
	}
}
