package election

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redlease/redlease/internal/testing/hookstest"
	"github.com/redlease/redlease/internal/testing/testnodes"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

const wait = 10 * time.Second // generous bound for events that come in ms

// inOrder is TestCallbacksAndEventsInOrder's one candidate and what its
// callbacks recorded.
type inOrder struct {
	cfg Config
	e   *Elector
	r   *running
	// OnElected runs in a goroutine of its own, the other callbacks in the
	// callback goroutine: each keeps its order.
	onElected, others *recorder
	firstCtx          context.Context // term 1's, as OnElected got it
}

// startInOrder starts the candidate "solo" alone on 3 nodes, its callbacks
// recorded.
func startInOrder(t *testing.T) *inOrder {
	_, nodes := testnodes.Minis(t, 3)
	c := newClient(t, unitClientCfg, nodes)
	o := &inOrder{onElected: &recorder{}, others: &recorder{}, cfg: unitCfg(t, "solo")}
	o.cfg.OnElected = func(ctx context.Context, term Term) {
		o.onElected.add(fmt.Sprintf("elected %d", term.Token))
		if term.Token == 1 {
			o.firstCtx = ctx
		}
		<-ctx.Done()
		o.onElected.add(fmt.Sprintf("ctx done %d: %v", term.Token, context.Cause(ctx)))
	}
	o.cfg.OnDemoted = func(term Term, cause error) {
		o.others.add(fmt.Sprintf("demoted %d: %v", term.Token, cause))
		o.onElected.add(fmt.Sprintf("demoted %d", term.Token))
	}
	o.cfg.OnLeaderChange = func(l redlock.Holder) {
		if l.Value == "" {
			o.others.add("leader none")
			return
		}
		o.others.add(fmt.Sprintf("leader %s (token %d)", l.ID, l.Token))
	}
	o.e = newElector(t, c, "order", o.cfg)
	o.r = start(t, o.e)
	return o
}

// firstTerm waits for term 1 and checks what the Elector says of it; it
// returns the term and when its event came.
func (o *inOrder) firstTerm(t *testing.T) (Term, time.Time) {
	e := o.e
	ev := waitEvent(t, e.Events(), wait, kind(EventElected))
	assert.Equal(t, "solo", ev.Leader.ID)
	assert.Equal(t, uint64(1), ev.Leader.Token)
	assert.Equal(t, ev.Leader, ev.Term.Holder)
	firstAt := ev.At
	first, ok := e.Term()
	require.True(t, ok)
	assert.Equal(t, uint64(1), first.Token)
	assert.Equal(t, first.Token, ev.Leader.Token)
	assert.Equal(t, "solo", first.ID)
	assert.True(t, first.held())
	assert.True(t, first.ValidUntil().After(time.Now()))
	assert.True(t, e.IsLeader())
	l, err := e.obs.Leader(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "solo", l.ID)
	assert.Equal(t, first.Token, l.Token)
	assert.NoError(t, e.Healthy(0))
	return first, firstAt
}

// resignAndReelect resigns term first, then waits for term 2, begun at
// least ResignDelay after first's event at firstAt.
func (o *inOrder) resignAndReelect(t *testing.T, first Term, firstAt time.Time) {
	e := o.e
	require.NoError(t, e.Resign(context.Background()))
	assert.False(t, e.IsLeader())
	assert.ErrorIs(t, context.Cause(o.firstCtx), ErrResigned)
	ev := waitEvent(t, e.Events(), wait, kind(EventDemoted))
	assert.ErrorIs(t, ev.Err, ErrResigned)
	assert.Equal(t, first.Token, ev.Leader.Token)
	assert.False(t, first.held())
	_, err := e.obs.Leader(context.Background())
	assert.ErrorIs(t, err, redlock.ErrNoHolder, "released on every node")

	// Alone, it takes over again after standing aside.
	ev = waitEvent(t, e.Events(), wait, kind(EventLeaderChanged))
	assert.True(t, ev.Leader.Value == "", "no leader between the terms")
	ev = waitEvent(t, e.Events(), wait, kind(EventElected))
	assert.Equal(t, uint64(2), ev.Leader.Token)
	assert.GreaterOrEqual(t, ev.At.Sub(firstAt), o.cfg.ResignDelay, "stood aside")
}

// stop stops Run and checks that it ended and released term 2.
func (o *inOrder) stop(t *testing.T) {
	e := o.e
	err := o.r.stop(t)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, context.Canceled)
	ev := waitEvent(t, e.Events(), wait, kind(EventDemoted))
	assert.ErrorIs(t, ev.Err, context.Canceled)
	for range e.Events() { // closed when Run returned
	}
	assert.False(t, e.IsLeader())
	_, err = e.obs.Leader(context.Background())
	assert.ErrorIs(t, err, redlock.ErrNoHolder, "Run released the term before returning")
}

// One candidate, alone: every callback and event in order, through a
// Resign, a re-election after ResignDelay, and the stop of Run.
func TestCallbacksAndEventsInOrder(t *testing.T) {
	o := startInOrder(t)
	e := o.e
	first, firstAt := o.firstTerm(t)
	o.resignAndReelect(t, first, firstAt)
	o.stop(t)

	assert.Equal(t, []string{
		"elected 1",
		"ctx done 1: election: resigned",
		"demoted 1",
		"elected 2",
		"ctx done 2: election: stopped: context canceled",
		"demoted 2",
	}, o.onElected.get(), "OnDemoted after OnElected returned; Run waited for both")
	assert.Equal(t, []string{
		"demoted 1: election: resigned",
		"leader none",
		"demoted 2: election: stopped: context canceled",
	}, o.others.get(), "OnLeaderChange and OnDemoted in the order seen; its own terms are OnElected's")
	assert.Zero(t, e.dropped.Load())
	assert.ErrorIs(t, e.Run(context.Background()), redlock.ErrInvalidArgument, "Run called twice")
}

// Resign hands over only after OnElected returned: while the old leader's
// work winds down, its lease stays on the nodes and nobody else is
// elected; then the standby is elected at once, with a higher token.
func TestResignWaitsForOnElected(t *testing.T) {
	ms, nodes := testnodes.Minis(t, 3)
	winding := make(chan struct{})
	finish := make(chan struct{})
	var aReturned time.Time
	cfgA := unitCfg(t, "a")
	cfgA.OnElected = func(ctx context.Context, _ Term) {
		<-ctx.Done()
		close(winding)
		<-finish // the work winds down
		aReturned = time.Now()
	}
	a := start(t, newElector(t, newClient(t, unitClientCfg, nodes), "handover", cfgA))
	waitEvent(t, a.Events(), wait, kind(EventElected))

	cfgB := unitCfg(t, "b")
	bStarted := make(chan time.Time, 1)
	cfgB.OnElected = func(ctx context.Context, _ Term) {
		bStarted <- time.Now()
		<-ctx.Done()
	}
	b := start(t, newElector(t, newClient(t, unitClientCfg, nodes), "handover", cfgB))
	ev := waitEvent(t, b.Events(), wait, kind(EventLeaderChanged))
	require.Equal(t, "a", ev.Leader.ID, "b stands by")

	resigned := make(chan error, 1)
	go func() { resigned <- a.Resign(context.Background()) }()
	<-winding
	assert.False(t, a.IsLeader(), "not leading once the term's context is cancelled")
	for _, m := range ms {
		v, err := m.Get("handover")
		require.NoError(t, err)
		assert.Equal(t, "a", notice.DecodeValue(v).ID, "the term is kept while OnElected runs")
	}
	assert.False(t, b.IsLeader())
	select {
	case err := <-resigned:
		t.Fatalf("Resign returned (%v) before OnElected did", err)
	default:
	}

	close(finish)
	require.NoError(t, <-resigned)
	got := <-bStarted
	assert.True(t, got.After(aReturned), "b started %s after a's OnElected returned", got.Sub(aReturned))
	ev = waitEvent(t, b.Events(), wait, kind(EventElected))
	assert.Equal(t, uint64(2), ev.Leader.Token)
	ev = waitEvent(t, a.Events(), wait, func(ev Event) bool { return ev.Kind == EventLeaderChanged && ev.Leader.ID == "b" })
	assert.Equal(t, uint64(2), ev.Leader.Token)
}

// An OnElected that ignores its context delays the handover until the
// term's validity ends, no longer; the elector does not campaign again
// while it runs, and reports itself unhealthy.
func TestBlockingOnElected(t *testing.T) {
	_, nodes := testnodes.Minis(t, 3)
	clientCfg := unitClientCfg
	clientCfg.NodeTimeout = 200 * time.Millisecond
	unblock := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-unblock:
		default:
			close(unblock)
		}
	})
	cfgA := unitCfg(t, "a")
	cfgA.Lease.TTL = time.Second
	cfgA.StopTimeout = 50 * time.Millisecond
	cfgA.OnElected = func(context.Context, Term) { <-unblock }
	a := start(t, newElector(t, newClient(t, clientCfg, nodes), "blocking", cfgA))
	waitEvent(t, a.Events(), wait, kind(EventElected))
	term, ok := a.Term()
	require.True(t, ok)

	cfgB := unitCfg(t, "b")
	cfgB.Lease.TTL = time.Second
	b := start(t, newElector(t, newClient(t, clientCfg, nodes), "blocking", cfgB))
	waitEvent(t, b.Events(), wait, kind(EventLeaderChanged))

	resignAt := time.Now()
	validUntil := term.ValidUntil()
	require.NoError(t, a.Resign(context.Background()))
	assert.False(t, time.Now().Before(validUntil), "released at the end of the validity, not before")
	assert.Less(t, time.Since(resignAt), 2*cfgA.Lease.TTL, "not later")
	ev := waitEvent(t, a.Events(), wait, kind(EventDemoted))
	assert.ErrorIs(t, ev.Err, ErrResigned)
	waitEvent(t, b.Events(), wait, kind(EventElected))
	within(t, wait, func() bool { return a.Healthy(0) != nil }, "the lingering OnElected makes a unhealthy")
	assert.ErrorIs(t, a.Healthy(0), ErrUnhealthy)
	assert.NoError(t, a.Healthy(time.Hour))

	// b resigns; a may not campaign while its OnElected runs, so b is
	// elected again after standing aside.
	require.NoError(t, b.Resign(context.Background()))
	ev = waitEvent(t, b.Events(), wait, kind(EventElected))
	assert.Equal(t, "b", ev.Leader.ID)
	assert.False(t, a.IsLeader())

	// Run returns after StopTimeout although OnElected still runs.
	start := time.Now()
	require.ErrorIs(t, a.stop(t), context.Canceled)
	assert.Less(t, time.Since(start), wait)
	close(unblock)
	within(t, wait, func() bool {
		err := a.Healthy(0)
		return err != nil && !strings.Contains(err.Error(), "still runs")
	}, "OnElected returned: only Run's return is left")
	assert.ErrorContains(t, a.Healthy(0), "Run returned")
}

// A panic in OnElected ends the term with a *PanicError as the cause;
// panics in the other callbacks are logged; the elector goes on.
func TestPanickingCallbacks(t *testing.T) {
	_, nodes := testnodes.Minis(t, 3)
	cfg := unitCfg(t, "p")
	causes := make(chan error, 4)
	cfg.OnElected = func(ctx context.Context, term Term) {
		if term.Token == 1 {
			panic("boom")
		}
		<-ctx.Done()
	}
	cfg.OnDemoted = func(_ Term, cause error) {
		causes <- cause
		panic("demoted boom")
	}
	cfg.OnLeaderChange = func(redlock.Holder) { panic("change boom") }
	e := newElector(t, newClient(t, unitClientCfg, nodes), "panics", cfg)
	r := start(t, e)
	ev := waitEvent(t, e.Events(), wait, kind(EventDemoted))
	assert.ErrorIs(t, ev.Err, ErrCallbackPanicked)
	// The cause names the callback and gives the value and the stack.
	assert.Contains(t, ev.Err.Error(), "election: callback panicked: OnElected: boom\n")
	assert.Contains(t, ev.Err.Error(), "TestPanickingCallbacks")
	assert.ErrorIs(t, <-causes, ErrCallbackPanicked)

	ev = waitEvent(t, e.Events(), wait, kind(EventElected))
	assert.Equal(t, uint64(2), ev.Leader.Token, "re-elected after a panic")
	require.ErrorIs(t, r.stop(t), context.Canceled)
	assert.ErrorIs(t, <-causes, context.Canceled)
}

// Callbacks that block (OnLeaderChange, OnDemoted) delay only the
// callbacks queued after them: terms begin and end, events flow, Resign
// and Run return.
func TestBlockingCallbacksDoNotWedge(t *testing.T) {
	_, nodes := testnodes.Minis(t, 3)
	unblock := make(chan struct{})
	cfg := unitCfg(t, "w")
	cfg.StopTimeout = 20 * time.Millisecond
	cfg.OnLeaderChange = func(redlock.Holder) { <-unblock }
	cfg.OnDemoted = func(Term, error) { <-unblock }
	e := newElector(t, newClient(t, unitClientCfg, nodes), "wedge", cfg)
	r := start(t, e)
	waitEvent(t, e.Events(), wait, kind(EventElected))
	require.NoError(t, e.Resign(context.Background()))
	waitEvent(t, e.Events(), wait, kind(EventDemoted))
	waitEvent(t, e.Events(), wait, kind(EventLeaderChanged))
	require.ErrorIs(t, r.stop(t), context.Canceled)
	close(unblock)
}

// Events never block the elector: with nobody reading, they are dropped,
// counted; the hooks see every term.
func TestEventsDropped(t *testing.T) {
	_, nodes := testnodes.Minis(t, 3)
	h := &hookstest.Recorder{}
	cfg := unitCfg(t, "d")
	cfg.EventBuffer = 1
	ccfg := unitClientCfg
	ccfg.Hooks = h.Observe
	e := newElector(t, newClient(t, ccfg, nodes), "dropped", cfg)
	r := start(t, e)
	within(t, wait, e.IsLeader, "elected")
	require.NoError(t, e.Resign(context.Background()))
	within(t, wait, e.IsLeader, "elected again")
	require.ErrorIs(t, r.stop(t), context.Canceled)
	assert.NotZero(t, e.dropped.Load())
	assert.Len(t, h.Of(EventElected), 2)
	assert.Len(t, h.Of(EventDemoted), 2)
	won := 0
	for _, ev := range h.Of(redlock.EventAcquire) {
		if ev.Err == nil {
			won++
		}
	}
	assert.GreaterOrEqual(t, won, 2)
	ev, ok := <-e.Events()
	require.True(t, ok, "the first event was kept")
	assert.Equal(t, EventElected, ev.Kind)
	_, ok = <-e.Events()
	assert.False(t, ok)
}

// After a crash (no release), a standby takes over once the key lapses
// on the nodes, and the crashed leader's term ends by its deadline.
func TestCrashTakeover(t *testing.T) {
	ms, nodes := testnodes.Minis(t, 3)
	cfg := unitCfg(t, "a")
	cfg.Lease.TTL = 2 * time.Second
	ca := newClient(t, unitClientCfg, nodes)
	a := start(t, newElector(t, ca, "crash", cfg))
	waitEvent(t, a.Events(), wait, kind(EventElected))
	b := start(t, newElector(t, newClient(t, unitClientCfg, nodes), "crash", unitCfg(t, "b")))
	waitEvent(t, b.Events(), wait, kind(EventLeaderChanged))

	require.NoError(t, ca.Close()) // a can neither refresh nor release
	ev := waitEvent(t, a.Events(), wait, kind(EventDemoted))
	assert.ErrorIs(t, ev.Err, lease.ErrLeaseLost)
	select {
	case <-a.done:
	case <-time.After(wait):
		t.Fatal("Run did not return after the client was closed")
	}
	require.ErrorIs(t, a.err, redlock.ErrClosed, "Run says why it stopped")
	for _, m := range ms {
		assert.True(t, m.Exists("crash"), "no release: the key stays until it lapses")
	}
	assert.False(t, b.IsLeader())
	for _, m := range ms {
		m.FastForward(cfg.Lease.TTL) // miniredis' TTLs move only when told
	}
	ev = waitEvent(t, b.Events(), wait, kind(EventElected))
	assert.Equal(t, uint64(2), ev.Leader.Token)
}
