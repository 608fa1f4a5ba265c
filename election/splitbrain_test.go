package election

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/splitbrain"
	"github.com/redlease/redlease/internal/testing/hookstest"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/observer"
	"github.com/redlease/redlease/redlock"
)

// waitHook waits until r recorded an event of kind k that ok accepts.
func waitHook(t testing.TB, r *hookstest.Recorder, k redlock.EventKind, ok func(redlock.Event) bool) redlock.Event {
	t.Helper()
	deadline := time.After(wait)
	for {
		changed := r.Changed()
		for _, ev := range r.Of(k) {
			if ok(ev) {
				return ev
			}
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no %s event within %s: %v", k, wait, r.Of(k))
		}
	}
}

// TestIntegrationSplitBrainAlarm forces two holders at once, as only an
// unsafe set-up can: the quarantine off (redlock.Config.DisableQuarantine)
// and two of three servers restarted empty while a leader holds. An
// intruder then takes the election's key on the two forgetful servers.
// The leader's majority read, within its own validity, finds the intruder
// on a majority (evidence "overlap"); an observer's Watch, which saw both
// terms complete, sees the intruder's token not above the leader's
// ("token"). Each raises the alarm: the Hooks event, with the Error log.
func TestIntegrationSplitBrainAlarm(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real redis-server processes")
	}
	ctx := context.Background()
	g := redistest.Start(t, 3)
	cfg := redlock.Config{NodeTimeout: 250 * time.Millisecond, DisableQuarantine: true}
	client := func(h *hookstest.Recorder) *redlock.Client {
		c := cfg
		c.Hooks = h.Observe
		return newClient(t, c, realNodes(t, g.Addrs()))
	}
	leaderHooks, watchHooks := &hookstest.Recorder{}, &hookstest.Recorder{}

	o, err := observer.New(client(watchHooks), "sb", observer.Config{PollInterval: 100 * time.Millisecond})
	require.NoError(t, err)
	wctx, stopWatch := context.WithCancel(ctx)
	watched := watchAll(t, wctx, o)
	t.Cleanup(stopWatch) // before watchAll's cleanup waits for the watch

	// The leader refreshes late (RenewInterval 8s of a 10s TTL): the
	// intruder comes before its first refresh, which would fail on the
	// forgetful servers.
	lcfg := Config{Lease: lease.Config{ID: "leader", TTL: 10 * time.Second, RenewInterval: 8 * time.Second,
		SafetyMargin: 500 * time.Millisecond, RetryDelay: 50 * time.Millisecond, Logger: testLogger(t)}}
	e := newElector(t, client(leaderHooks), "sb", lcfg)
	start(t, e)
	term := waitEvent(t, e.Events(), wait, kind(EventElected)).Term
	require.True(t, watched.waitToken(t, term.Token, wait, func() bool { return false }))

	for _, i := range []int{1, 2} {
		require.NoError(t, g.Server(i).Restart(true))
	}
	intruder, err := lease.TryAcquire(ctx, client(&hookstest.Recorder{}), "sb",
		lease.Config{ID: "intruder", TTL: 10 * time.Second, Logger: testLogger(t)})
	require.NoError(t, err, "the forgetful servers must vote at once")
	t.Cleanup(func() { _ = intruder.Release(ctx) })
	require.True(t, term.held(), "the set-up outlasted the leader's term: the test proves nothing")
	t.Logf("leader's token %d, intruder's %d", term.Token, intruder.Token())

	ev := waitHook(t, leaderHooks, redlock.EventSplitBrain, func(ev redlock.Event) bool { return ev.Evidence == splitbrain.Overlap })
	assert.Equal(t, "sb", ev.Key)
	assert.Equal(t, intruder.Token(), ev.Token)
	assert.ErrorContains(t, ev.Err, "granted twice")
	assert.Equal(t, "error", ev.Outcome)

	ev = waitHook(t, watchHooks, redlock.EventSplitBrain, func(ev redlock.Event) bool { return ev.Evidence == splitbrain.Token })
	assert.Equal(t, "sb", ev.Key)
	assert.Equal(t, intruder.Token(), ev.Token)
	assert.LessOrEqual(t, ev.Token, term.Token)
}
