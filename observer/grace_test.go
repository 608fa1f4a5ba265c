package observer

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/testnodes"
)

// failOnce is a go-redis hook on the script calls on key: it counts them
// (calls) and those that failed (errs), and fails the next one once
// armed, closing fired when it did.
type failOnce struct {
	key   string
	calls atomic.Int64
	errs  atomic.Int64
	armed atomic.Bool
	fired chan struct{}
}

func (f *failOnce) DialHook(next redis.DialHook) redis.DialHook { return next }
func (f *failOnce) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); name != "evalsha" && name != "fcall" || !slices.Contains(cmd.Args(), any(f.key)) {
			return next(ctx, cmd)
		}
		f.calls.Add(1)
		if f.armed.CompareAndSwap(true, false) {
			err := errors.New("injected: no answer")
			cmd.SetErr(err)
			close(f.fired)
			return err
		}
		err := next(ctx, cmd)
		if err != nil {
			f.errs.Add(1)
		}
		return err
	}
}
func (f *failOnce) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestWatchOneFailedReadIsNotUnknown: one read in which two of three nodes
// fail (a loaded host whose reads all missed NodeTimeout) is read again
// within UnknownGrace; the watch reports no "unknown", and its next event
// is the next real change (issue #32).
func TestWatchOneFailedReadIsNotUnknown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, nodes := testnodes.Minis(t, 3)
	fails := []*failOnce{{key: "svc", fired: make(chan struct{})}, {key: "svc", fired: make(chan struct{})}}
	nodes[0].AddHook(fails[0])
	nodes[1].AddHook(fails[1])
	c := newClient(t, nodes)
	o, err := New(c, "svc", Config{PollInterval: 5 * time.Millisecond, Logger: testLogger(t)})
	require.NoError(t, err)
	w := o.Watch(ctx)
	require.Equal(t, "no leader", stateOf(next(t, w)))

	for _, f := range fails {
		f.armed.Store(true)
	}
	for _, f := range fails {
		<-f.fired // the watch's next read: one node of three answered
	}
	a := hold(t, c, "svc", "a")
	ev := next(t, w)
	require.Equal(t, "leader", stateOf(ev), "the next event is the new leader, not unknown: %v", ev)
	assert.Equal(t, a.Token(), ev.Leader.Token)
}

// TestWatchUnknownAfterGrace: nodes that stay silent are reported unknown,
// once the grace is over and not before.
func TestWatchUnknownAfterGrace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ms, nodes := testnodes.Minis(t, 3)
	c := newClient(t, nodes)
	const grace = 300 * time.Millisecond
	o, err := New(c, "svc", Config{PollInterval: 5 * time.Millisecond, UnknownGrace: grace, Logger: testLogger(t)})
	require.NoError(t, err)
	w := o.Watch(ctx)
	require.Equal(t, "no leader", stateOf(next(t, w)))

	down := time.Now()
	ms[0].Close()
	ms[1].Close()
	ev := next(t, w)
	require.Equal(t, "unknown", stateOf(ev))
	assert.ErrorIs(t, ev.Err, ErrUnknown)
	assert.GreaterOrEqual(t, ev.At.Sub(down), grace, "unknown only after the grace")
}

// TestUnknownStreak: the rule on its own.
func TestUnknownStreak(t *testing.T) {
	const grace = time.Second
	t0 := time.Now()
	unknown := func(d time.Duration) Event { return Event{Err: ErrUnknown, At: t0.Add(d)} }
	var s unknownStreak
	again, d := s.hold(unknown(0), false, grace)
	assert.True(t, again, "the first unknown read is read again")
	assert.Greater(t, d, time.Duration(0))
	assert.LessOrEqual(t, d, grace)
	again, _ = s.hold(unknown(grace/2), false, grace)
	assert.True(t, again, "still within the grace")
	again, _ = s.hold(unknown(grace), false, grace)
	assert.False(t, again, "no majority for the grace, in three reads: unknown")

	again, _ = s.hold(unknown(0), false, grace)
	require.True(t, again)
	again, _ = s.hold(unknown(2*grace), false, grace)
	assert.False(t, again, "two reads, the grace over")

	s.hold(unknown(0), false, grace)
	again, _ = s.hold(Event{At: t0.Add(grace / 2)}, false, grace)
	assert.False(t, again, "an answer ends the streak")
	again, _ = s.hold(unknown(2*grace), false, grace)
	assert.True(t, again, "a new streak starts")

	var one unknownStreak
	again, d = one.hold(Event{Err: ErrUnknown, At: t0}, false, 0)
	assert.True(t, again, "with no grace, still one more read")
	assert.Zero(t, d)
	again, _ = one.hold(unknown(0), true, grace)
	assert.False(t, again, "unknown already reported: nothing to hold back")
}

// TestWatchTokenNeverGoesBack: a read that shows a term's token lower than
// the one already reported for it (issue #32: "r3 (token 6)" then "r3
// (token 5)") is not reported: the watch's next event is the next real
// change.
func TestWatchTokenNeverGoesBack(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ms, nodes := testnodes.Minis(t, 3)
	reads := &failOnce{key: "svc"}
	nodes[0].AddHook(reads)
	c := newClient(t, nodes)
	o, err := New(c, "svc", Config{PollInterval: 5 * time.Millisecond, Logger: testLogger(t)})
	require.NoError(t, err)
	for _, m := range ms {
		require.NoError(t, m.Set("svc:fence", "41"))
	}
	a := hold(t, c, "svc", "a")
	require.Equal(t, uint64(42), a.Token())
	w := o.Watch(ctx)
	require.Equal(t, a.Token(), next(t, w).Leader.Token)

	lower := strconv.FormatUint(a.Token()-1, 10)
	for _, m := range ms {
		require.NoError(t, m.Set("svc:fence", lower))
	}
	seen := reads.calls.Load()
	require.Eventually(t, func() bool { return reads.calls.Load() >= seen+2 }, 10*time.Second, time.Millisecond,
		"the watch read the lower token")
	require.NoError(t, a.Release(ctx))
	ev := next(t, w)
	assert.Equal(t, "no leader", stateOf(ev), "no event with a lower token for the same term: %v", ev)
}
