package observer

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redlease/redlease/internal/testing/hookstest"
	"github.com/redlease/redlease/internal/testing/locktest"
	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/internal/unfenced"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/redlock"
)

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"negative poll interval", Config{PollInterval: -time.Second}, "PollInterval (-1s) must not be negative"},
		{"poll interval too short", Config{PollInterval: time.Microsecond}, "PollInterval (1µs) must be at least 1ms"},
		{"negative event buffer", Config{EventBuffer: -2}, "EventBuffer (-2) must not be negative"},
		{"negative unknown grace", Config{UnknownGrace: -time.Second}, "UnknownGrace (-1s) must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.validate()
			require.ErrorIs(t, err, redlock.ErrInvalidArgument)
			assert.Contains(t, err.Error(), tc.want)
			_, err = New(&redlock.Client{}, "k", tc.cfg)
			require.ErrorIs(t, err, redlock.ErrInvalidArgument)
		})
	}
	require.NoError(t, Config{}.validate())
	d := Config{}.withDefaults()
	assert.Equal(t, time.Second, d.PollInterval)
	assert.Equal(t, 16, d.EventBuffer)
	assert.Equal(t, time.Second, d.UnknownGrace)
	assert.NotNil(t, d.Logger)

	_, err := New(nil, "k", Config{})
	require.ErrorIs(t, err, redlock.ErrInvalidArgument)
	_, err = New(&redlock.Client{}, "", Config{})
	require.ErrorIs(t, err, redlock.ErrInvalidArgument)
}

func TestLeader(t *testing.T) {
	ctx := context.Background()
	ms, nodes := testnodes.Minis(t, 5)
	c := newClient(t, nodes)
	o, err := New(c, "svc", Config{})
	require.NoError(t, err)

	l, err := o.Leader(ctx)
	require.ErrorIs(t, err, redlock.ErrNoHolder)
	assert.Empty(t, l.Value)
	assert.Equal(t, "none", describe(l))

	ls := hold(t, c, "svc", "web-1")
	l, err = o.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, "web-1", l.ID)
	assert.Equal(t, map[string]string{"addr": "web-1:80"}, l.Metadata)
	assert.Equal(t, ls.Token(), l.Token)
	assert.Equal(t, ls.Holder().Value, l.Value)
	assert.Equal(t, "web-1 (token 1)", describe(l))
	assert.Positive(t, l.Remaining)
	assert.True(t, l.Expires.After(time.Now()))
	assert.NotEmpty(t, l.Value)

	ms[0].Close()
	ms[1].Close()
	l, err = o.Leader(ctx)
	require.NoError(t, err, "a majority still holds it")
	assert.Equal(t, "web-1", l.ID)

	ms[2].Close()
	l, err = o.Leader(ctx)
	require.ErrorIs(t, err, ErrUnknown, "two of five answering: not a stale leader, not 'no leader'")
	assert.NotErrorIs(t, err, redlock.ErrNoHolder)
	assert.Empty(t, l.Value)
	assert.Contains(t, err.Error(), "2 of 5 nodes could answer, 3 needed")

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = o.Leader(cancelled)
	require.ErrorIs(t, err, context.Canceled)

	require.NoError(t, c.Close())
	_, err = o.Leader(ctx)
	require.ErrorIs(t, err, redlock.ErrClosed)
}

// A new term read with the previous term's token (its write-back is in
// flight) is read again; if the token never rises, the read returns the
// new holder with Token 0 (not known yet), never with the previous term's.
func TestLeaderRereadsUnfencedTerm(t *testing.T) {
	ctx := context.Background()
	ms, nodes := testnodes.Minis(t, 3)
	c := newClient(t, nodes)
	o, err := New(c, "svc", Config{})
	require.NoError(t, err)
	l0 := hold(t, c, "svc", "a")
	l, err := o.Leader(ctx)
	require.NoError(t, err)
	require.Equal(t, l0.Token(), l.Token)

	forged := "rl1:AAAAAAAAAAAAAAAAAAAAAA:id=b"
	for _, m := range ms {
		m.Set("svc", forged)
	}
	start := time.Now()
	l, err = o.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, "b", l.ID)
	assert.Zero(t, l.Token, "another term's token reported for the new leader")
	assert.GreaterOrEqual(t, time.Since(start), (1<<unfenced.Rereads-1)*unfenced.Wait)
}

// A watch that read a new term before its token was written back reports
// the term again, same Value, once its token shows (before, with Token 0:
// not known yet). Without it, standbys would go on showing no token for
// the new leader.
func TestWatchReportsLateToken(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ms, nodes := testnodes.Minis(t, 3)
	c := newClient(t, nodes)
	o, err := New(c, "svc", Config{PollInterval: 10 * time.Millisecond, Logger: testLogger(t)})
	require.NoError(t, err)
	a := hold(t, c, "svc", "a")
	w := o.Watch(ctx)
	ev := next(t, w)
	require.Equal(t, a.Token(), ev.Leader.Token)

	// A new term whose token is not written back yet: the counters still
	// hold a's token.
	forged := "rl1:AAAAAAAAAAAAAAAAAAAAAA:id=b"
	for _, m := range ms {
		m.Set("svc", forged)
	}
	ev = next(t, w)
	require.Equal(t, "b", ev.Leader.ID)
	require.Zero(t, ev.Leader.Token, "read before the write-back: not known yet, never a's token")

	// The write-back lands.
	written := strconv.FormatUint(a.Token()+1, 10)
	for _, m := range ms {
		m.Set("svc:fence", written)
	}
	ev = next(t, w)
	assert.Equal(t, "leader", stateOf(ev))
	assert.Equal(t, "b", ev.Leader.ID)
	assert.Equal(t, forged, ev.Leader.Value, "the same term")
	assert.Equal(t, a.Token()+1, ev.Leader.Token)
}

// A new term read while its acquisition is on its way: two nodes granted
// its token, two others granted late spares above it (they saw a failed
// attempt), the fifth not yet. The read reports the new leader with Token
// 0 (not known yet), never the spares' counter, which is the next term's
// token; once its majority shows, its own. (TestIntegrationManyTerms: a
// standby reported c2's term with token 40, c1's next, and never 39.)
func TestLeaderNoSpareToken(t *testing.T) {
	ctx := context.Background()
	ms, nodes := testnodes.Minis(t, 5)
	c := newClient(t, nodes)
	o, err := New(c, "svc", Config{})
	require.NoError(t, err)
	a := hold(t, c, "svc", "a")
	token, spare := a.Token()+1, strconv.FormatUint(a.Token()+2, 10)

	forged := "rl1:AAAAAAAAAAAAAAAAAAAAAA:id=b"
	for i, m := range ms {
		switch i {
		case 0, 1:
			m.Set("svc", forged)
			m.Set("svc:fence", strconv.FormatUint(token, 10))
		case 2:
			m.Del("svc") // a released; b's grant on its way
		default:
			m.Set("svc", forged)
			m.Set("svc:fence", spare)
		}
	}
	l, err := o.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, "b", l.ID)
	assert.Zero(t, l.Token, "the token's majority not granted yet: not known, never a spare's counter")

	// The last grant lands, and the spares are settled to the token.
	for i, m := range ms {
		if i >= 2 {
			m.Set("svc", forged)
			m.Set("svc:fence", strconv.FormatUint(token, 10))
		}
	}
	l, err = o.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, forged, l.Value)
	assert.Equal(t, token, l.Token)
}

func TestWatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, nodes := testnodes.Minis(t, 3)
	h := &hookstest.Recorder{}
	c := newClient(t, nodes, h.Observe)
	o, err := New(c, "svc", Config{Logger: testLogger(t)})
	require.NoError(t, err)
	w := o.Watch(ctx)
	ev := next(t, w)
	assert.Equal(t, "no leader", stateOf(ev), "the first event is the state at start")
	assert.Equal(t, "no leader", ev.String())

	a := hold(t, c, "svc", "a")
	ev = next(t, w)
	assert.Equal(t, "leader", stateOf(ev))
	assert.Equal(t, "a", ev.Leader.ID)
	assert.Equal(t, a.Token(), ev.Leader.Token)

	require.NoError(t, a.Release(ctx))
	ev = next(t, w)
	assert.Equal(t, "no leader", stateOf(ev))
	assert.Empty(t, ev.Leader.Value)

	b := hold(t, c, "svc", "b")
	ev = next(t, w)
	assert.Equal(t, "b", ev.Leader.ID)
	assert.Equal(t, b.Token(), ev.Leader.Token)
	assert.Greater(t, b.Token(), a.Token())
	assert.Equal(t, fmt.Sprintf("leader b (token %d)", b.Token()), ev.String())

	// A Watch is the standby's path: it reports nothing to the Hooks
	// (but a split-brain alarm), which see the locks' own events (and an
	// elector's).
	for _, x := range h.Events() {
		assert.Contains(t, []redlock.EventKind{redlock.EventAcquire, redlock.EventExtend, redlock.EventRelease, redlock.EventQuarantine},
			x.Kind, "%+v", x)
	}

	cancel()
	require.NoError(t, ended(t, w), "ctx's end closes the channel, with no event of its own")
}

// Without a majority, a watch says unknown, not the last leader; it says
// who leads again once a majority answers. Closing the client ends it.
func TestWatchUnknown(t *testing.T) {
	ctx := context.Background()
	ms, nodes := testnodes.Minis(t, 5)
	c := newClient(t, nodes)
	o, err := New(c, "svc", Config{PollInterval: 10 * time.Millisecond, Logger: testLogger(t)})
	require.NoError(t, err)
	hold(t, c, "svc", "a")
	w := o.Watch(ctx)
	ev := next(t, w)
	require.Equal(t, "leader", stateOf(ev))

	for _, m := range ms[:3] {
		m.Close()
	}
	ev = next(t, w)
	assert.Equal(t, "unknown", stateOf(ev))
	assert.ErrorIs(t, ev.Err, ErrUnknown)
	assert.Empty(t, ev.Leader.Value)

	for _, m := range ms[:3] {
		require.NoError(t, m.Restart()) // with their data
	}
	ev = next(t, w)
	assert.Equal(t, "leader", stateOf(ev))
	assert.Equal(t, "a", ev.Leader.ID)

	require.NoError(t, c.Close())
	require.ErrorIs(t, ended(t, w), redlock.ErrClosed)
}

// Two holders at once, forced: the quarantine off and two of three
// nodes flushed while a holds, then b acquires on them with its counter
// from scratch. The Watch, which saw a complete (its acquire notice came
// before a read where every node answered), sees b complete with a token
// not above a's: the split-brain alarm, on the Hooks.
func TestWatchSplitBrainAlarm(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ms, nodes := testnodes.Minis(t, 3)
	h := &hookstest.Recorder{}
	c := locktest.New(t, redlock.Config{NodeTimeout: 500 * time.Millisecond, DisableQuarantine: true, Hooks: h.Observe,
		Logger: testLogger(t)}, nodes, true)
	o, err := New(c, "svc", Config{PollInterval: 5 * time.Millisecond, Logger: testLogger(t)})
	require.NoError(t, err)
	w := o.Watch(ctx)
	assert.Equal(t, "no leader", stateOf(next(t, w)))

	a := hold(t, c, "svc", "a")
	require.Eventually(t, func() bool { v, _ := o.witness.Reference(); return v == a.Holder().Value },
		10*time.Second, time.Millisecond, "the watch never saw a complete")
	for _, m := range ms[1:] {
		m.FlushAll()
	}
	b := hold(t, c, "svc", "b")
	require.LessOrEqual(t, b.Token(), a.Token(), "the flushed nodes' counters started again")

	var alarm []redlock.Event
	require.Eventually(t, func() bool { alarm = h.Of(redlock.EventSplitBrain); return len(alarm) > 0 },
		10*time.Second, time.Millisecond, "no split-brain alarm")
	require.Len(t, alarm, 1, "one alarm per term")
	assert.Equal(t, "svc", alarm[0].Key)
	assert.Equal(t, b.Token(), alarm[0].Token)
	assert.Equal(t, "token", alarm[0].Evidence)
	assert.ErrorContains(t, alarm[0].Err, "not above")
	assert.Equal(t, "error", alarm[0].Outcome)
}
