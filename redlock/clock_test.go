package redlock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/internal/unsafeopt"
)

// clockEvents records the events that carry Evidence.
type clockEvents struct {
	mu  sync.Mutex
	evs []Event
}

func (e *clockEvents) observe(ev Event) {
	if ev.Evidence != "" {
		e.mu.Lock()
		e.evs = append(e.evs, ev)
		e.mu.Unlock()
	}
}

// wait returns the events once there are n, failing t after 5s.
func (e *clockEvents) wait(t *testing.T, n int) []Event {
	t.Helper()
	var out []Event
	require.Eventually(t, func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		out = append([]Event(nil), e.evs...)
		return len(out) >= n
	}, 5*time.Second, time.Millisecond, "%d clock events, not %d", len(out), n)
	return out
}

// clockCase is a lock on three in-memory nodes whose node 2's clock (its
// TIME) jumps forward by 10s after one ExtendAll, its copy there expired
// by the jump, then extended again. With bare, node 0 holds another
// value, so that the lock rests on nodes 1 and 2 alone. It returns the
// lock, the nodes, the clock events and the second ExtendAll's error.
func clockCase(t *testing.T, bare bool, off unsafeopt.Off) (*Lock, []*miniredis.Miniredis, *clockEvents, error) {
	ctx := context.Background()
	ms, nodes := testnodes.Minis(t, 3)
	evs := &clockEvents{}
	cfg := Config{NodeTimeout: time.Second, Hooks: evs.observe}
	turnOff(t, &cfg, off)
	c := newClient(t, cfg, nodes)
	if bare {
		require.NoError(t, ms[0].Set("k", "someone-else"))
	}
	l, err := c.TryAcquire(ctx, "k", 5*time.Second)
	require.NoError(t, err)
	require.NoError(t, c.ExtendAll(ctx, []*Lock{l})[0], "the first sample of every node")
	waitSampled(t, l, 2)
	ms[2].SetTime(time.Now().Add(10 * time.Second))
	ms[2].Del("k") // (miniredis expires keys by FastForward alone)
	return l, ms, evs, c.ExtendAll(ctx, []*Lock{l})[0]
}

// waitSampled waits until node i's answer to an extend of l was noted: its
// reply (and its TIME) was read, though the extend may have returned
// before it came.
func waitSampled(t *testing.T, l *Lock, i int) {
	t.Helper()
	require.Eventually(t, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.notedAt) > i && !l.notedAt[i].IsZero()
	}, 5*time.Second, time.Millisecond, "node %d never answered the extend", i)
}

// TestClockJumpEndsLockOnBareMajority: a lock held on nodes 1 and 2 when
// node 2's clock jumps forward ends at the extend that sees it
// (ErrNotHeld), the jump is reported, and node 2's marker is made anew
// (quarantined for MaxTTL, its floor to be raised).
func TestClockJumpEndsLockOnBareMajority(t *testing.T) {
	l, ms, events, err := clockCase(t, true, unsafeopt.Off{})
	require.ErrorIs(t, err, ErrNotHeld)
	assert.Contains(t, err.Error(), "clock jumped")
	assert.False(t, l.Held())
	evs := events.wait(t, 1)
	assert.Equal(t, EventQuarantine, evs[0].Kind)
	assert.Equal(t, "clock_fast", evs[0].Evidence)
	assert.Equal(t, ms[2].Addr(), evs[0].Node)
	assert.Equal(t, "error", evs[0].Outcome)
	require.Eventually(t, func() bool { return ms[2].HGet(markerKey, "ok") == "0" }, 5*time.Second, 5*time.Millisecond,
		"node 2's marker was not made anew")
}

// TestClockJumpKeepsLockOnMajority: the same jump under a lock held on all
// three nodes: the other two still hold it, and the extend succeeds.
func TestClockJumpKeepsLockOnMajority(t *testing.T) {
	l, _, events, err := clockCase(t, false, unsafeopt.Off{})
	require.NoError(t, err)
	assert.True(t, l.Held())
	evs := events.wait(t, 1)
	assert.Equal(t, "clock_fast", evs[0].Evidence)
}

// TestClockJumpControl: with the clock check off (its negative control),
// the lock on a bare majority keeps its deadline after the jump: the
// extend fails without a majority and the lock is still held.
func TestClockJumpControl(t *testing.T) {
	l, _, events, err := clockCase(t, true, unsafeopt.Off{ClockSanity: true})
	var qe *QuorumError
	require.ErrorAs(t, err, &qe)
	assert.NotErrorIs(t, err, ErrNotHeld)
	assert.True(t, l.Held(), "without the check, the holder goes on until its deadline")
	events.mu.Lock()
	defer events.mu.Unlock()
	assert.Empty(t, events.evs)
}

// TestClockStepBackReported: node 2's clock steps back: a slow clock is
// reported (EventNodeError, Evidence "clock_slow"), and the lock is
// extended.
func TestClockStepBackReported(t *testing.T) {
	ctx := context.Background()
	ms, nodes := testnodes.Minis(t, 3)
	events := &clockEvents{}
	c := newClient(t, Config{NodeTimeout: time.Second, Hooks: events.observe}, nodes)
	l, err := c.TryAcquire(ctx, "k", 5*time.Second)
	require.NoError(t, err)
	require.NoError(t, c.ExtendAll(ctx, []*Lock{l})[0])
	waitSampled(t, l, 2)
	ms[2].SetTime(time.Now().Add(-10 * time.Second))
	require.NoError(t, c.ExtendAll(ctx, []*Lock{l})[0])
	evs := events.wait(t, 1)
	assert.Equal(t, EventNodeError, evs[0].Kind)
	assert.Equal(t, "clock_slow", evs[0].Evidence)
	assert.Equal(t, ms[2].Addr(), evs[0].Node)
}
