package lease

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/clockshim"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/internal/testing/unsafetest"
	"github.com/redlease/redlease/internal/unsafeopt"
	"github.com/redlease/redlease/redlock"
)

// TestIntegrationClockJumpDemotesHolder is Kleppmann's case on real
// servers (docs/design.md §6.5): a lease held on a bare majority (servers
// 1 and 2; server 0 cut off from the holder) when server 2's wall clock
// steps forward by twice the TTL (an LD_PRELOAD shim, clockshim). Its copy
// there expires at once, and another client, which reaches all three,
// takes the key on servers 0 and 2. With the clock check, the holder's
// next refresh sees the step (within one refresh interval), its lease ends
// at once and the server is quarantined; in the control (the check off),
// the holder goes on until its deadline while the other client holds the
// key. Both windows are logged.
func TestIntegrationClockJumpDemotesHolder(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real redis-server processes")
	}
	for _, tc := range []struct {
		name string
		off  unsafeopt.Off
	}{{"detector", unsafeopt.Off{}}, {"control", unsafeopt.Off{ClockSanity: true}}} {
		t.Run(tc.name, func(t *testing.T) { clockJumpCase(t, tc.off) })
	}
}

// clockRig is the servers of a clock-jump case: server 2 runs under clk,
// and the holder reaches server 0 through proxy.
type clockRig struct {
	clk    *clockshim.Clock
	direct []*redis.Client
	holder []redis.UniversalClient // the holder's nodes
	other  []redis.UniversalClient // the other client's nodes, direct
	cut    func()                  // cuts the holder off server 0
}

func startClockRig(t *testing.T) *clockRig {
	clk := clockshim.New(t)
	g := redistest.Start(t, 2)
	jumpy := redistest.Start(t, 1, redistest.Options{Env: clk.Env()})
	addrs := append(g.Addrs(), jumpy.Addrs()...)
	proxy := redistest.NewProxy(t, addrs[0])
	r := &clockRig{clk: clk, cut: proxy.Partition}
	for i, a := range addrs {
		r.direct = append(r.direct, redistest.NewClient(t, redistest.FastOptions(a)))
		r.other = append(r.other, redistest.NewClient(t, redistest.FastOptions(a)))
		if i == 0 {
			a = proxy.Addr()
		}
		r.holder = append(r.holder, redistest.NewClient(t, redistest.FastOptions(a)))
	}
	t.Cleanup(proxy.Heal)
	return r
}

// clockEvents records when the holder's client first reported a clock
// jump (EventQuarantine, Evidence "clock_fast"), and when each refresh
// that ended before it had started.
type clockEvents struct {
	mu       sync.Mutex
	detected time.Time
	node     string
	before   []time.Time // the starts of the refreshes that ended before the detection
	slow     time.Time   // the first clock_slow report
}

func (e *clockEvents) hook(ev redlock.Event) {
	now := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case ev.Kind == redlock.EventExtend && e.detected.IsZero():
		e.before = append(e.before, now.Add(-ev.Duration))
	case ev.Kind == redlock.EventQuarantine && ev.Evidence == "clock_fast" && e.detected.IsZero():
		e.detected, e.node = now, ev.Node
	case ev.Kind == redlock.EventNodeError && ev.Evidence == "clock_slow" && e.slow.IsZero():
		e.slow = now
	}
}

// refreshesAfter counts the refreshes that started after t and ended
// before the detection.
func (e *clockEvents) refreshesAfter(t time.Time) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := 0
	for _, s := range e.before {
		if s.After(t) {
			k++
		}
	}
	return k
}

func (e *clockEvents) at() (time.Time, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.detected, e.node
}

// jumpCase is what one clock-jump case measured.
type jumpCase struct {
	cfg               Config
	l                 *Lease
	ev                *clockEvents
	stepped, otherWon time.Time
	marker            string // the jumpy server's marker's created field, before the step
}

// runJump holds a lease on the rig (on servers 1 and 2 alone when bare),
// steps server 2's clock by step (twice the TTL when 0) after the lease's
// first refresh, and has another client try the key until it wins or the
// lease ends.
func runJump(t *testing.T, r *clockRig, off unsafeopt.Off, bare bool, step time.Duration) *jumpCase {
	ctx := context.Background()
	jc := &jumpCase{ev: &clockEvents{}, cfg: Config{TTL: 2 * time.Second, RenewInterval: 400 * time.Millisecond,
		RetryInterval: 100 * time.Millisecond, SafetyMargin: 100 * time.Millisecond, ID: "holder"}}
	ccfg := redlock.Config{NodeTimeout: 100 * time.Millisecond, Hooks: jc.ev.hook}
	unsafetest.TurnOff(t, &ccfg, off)
	holder := newClient(t, ccfg, r.holder)
	other := newClient(t, redlock.Config{NodeTimeout: 100 * time.Millisecond}, r.other)
	if bare {
		r.cut()
	}
	jc.l = mustAcquire(t, ctx, holder, "jump", jc.cfg)
	first := jc.l.ValidUntil()
	require.Eventually(t, func() bool { return jc.l.ValidUntil().After(first) }, 5*time.Second, 5*time.Millisecond,
		"the lease refreshes (the clock's first sample)")
	var err error
	jc.marker, err = r.direct[2].HGet(ctx, "{redlease}:marker", "c").Result()
	require.NoError(t, err)

	if step == 0 {
		step = 2 * jc.cfg.TTL
	}
	_, err = r.clk.Step(step)
	require.NoError(t, err)
	jc.stepped = time.Now()
	won := make(chan time.Time, 1)
	tctx, stop := context.WithCancel(ctx)
	go func() { won <- takeOver(tctx, other, jc.l.Context()) }()
	// Stopped first: a test that failed while the lease is still held
	// (its refreshes go on) would otherwise wait for it forever.
	t.Cleanup(func() { stop(); <-won })
	if !bare {
		return jc
	}
	select {
	case <-jc.l.Context().Done():
	case <-time.After(3 * jc.cfg.TTL):
		t.Fatalf("the lease did not end after its copy on server 2 expired (Held=%v)", jc.l.Held())
	}
	jc.otherWon = <-won
	won <- jc.otherWon // for the cleanup
	return jc
}

func clockJumpCase(t *testing.T, off unsafeopt.Off) {
	r := startClockRig(t)
	jc := runJump(t, r, off, true, 0)
	ended := time.Now()
	exposure, overlap := ended.Sub(jc.stepped), time.Duration(0)
	if !jc.otherWon.IsZero() {
		overlap = ended.Sub(jc.otherWon)
	}
	t.Logf("step +%s: the holder's lease ended %s after it (the window in which two holders could exist); the other client won %s after it (overlap %s); cause: %v",
		2*jc.cfg.TTL, exposure, jc.otherWon.Sub(jc.stepped), overlap, context.Cause(jc.l.Context()))

	detected, node := jc.ev.at()
	if off.ClockSanity {
		require.True(t, detected.IsZero(), "the check is off, yet a jump was reported")
		require.False(t, jc.otherWon.IsZero(), "control: the other client never won while the holder held: the case shows nothing")
		require.Greater(t, overlap, jc.cfg.RenewInterval+200*time.Millisecond,
			"control: without the check, the holder goes on until its deadline while the other client holds")
		return
	}
	requireDetected(t, r, jc, detected, node)
	// The refresh that saw the jump ends the lease when it returns: it
	// waits for server 0 (cut off) up to RetryInterval.
	require.Less(t, ended.Sub(detected), jc.cfg.RetryInterval+200*time.Millisecond, "the holder outlived the refresh that saw the jump")
	require.Less(t, exposure, jc.cfg.TTL-jc.cfg.RenewInterval, "the holder went on about as long as without the check")
	cause := context.Cause(jc.l.Context())
	require.True(t, errors.Is(cause, ErrLeaseLost), "cause: %v", cause)
	require.Contains(t, cause.Error(), "clock jumped")
}

// requireDetected checks that the holder's client reported the jump on
// server 2 at its first refresh after the step (no refresh that started
// after the step ended before it but that one: within one refresh
// interval), and made its marker anew (it votes no for MaxTTL).
func requireDetected(t *testing.T, r *clockRig, jc *jumpCase, detected time.Time, node string) {
	t.Helper()
	require.False(t, detected.IsZero(), "the jump was not reported")
	require.Equal(t, r.holder[2].(*redis.Client).Options().Addr, node, "the jump was reported on another node")
	// The refresh whose request found the jump may itself end first, on
	// the other servers' answers (a lease on all three), before the
	// jumped server's answer is read: one such refresh at most.
	require.LessOrEqual(t, jc.ev.refreshesAfter(jc.stepped), 1, "refreshes that started after the step ended before the jump was reported")
	t.Logf("the jump was reported %s after the step (RenewInterval %s)", detected.Sub(jc.stepped), jc.cfg.RenewInterval)
	require.Eventually(t, func() bool {
		c, err := r.direct[2].HGet(context.Background(), "{redlease}:marker", "c").Result()
		return err == nil && c != jc.marker
	}, 5*time.Second, 5*time.Millisecond, "the marker of the server whose clock jumped was not made anew")
}

// TestIntegrationClockJumpKeepsMajorityHolder: the same step on server 2
// while the lease is held on all three: the jump is reported within one
// refresh interval and the server quarantined, but the holder keeps the
// two other copies, a majority: its lease goes on, refreshed, and the
// other client never wins.
func TestIntegrationClockJumpKeepsMajorityHolder(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real redis-server processes")
	}
	r := startClockRig(t)
	jc := runJump(t, r, unsafeopt.Off{}, false, 0)
	require.Eventually(t, func() bool { d, _ := jc.ev.at(); return !d.IsZero() }, 5*time.Second, 5*time.Millisecond,
		"the jump was not reported")
	detected, node := jc.ev.at()
	requireDetected(t, r, jc, detected, node)
	after := jc.l.ValidUntil()
	require.Eventually(t, func() bool { return jc.l.ValidUntil().After(after.Add(jc.cfg.RenewInterval)) }, 5*time.Second,
		5*time.Millisecond, "the lease is not refreshed after the jump (%v)", context.Cause(jc.l.Context()))
	require.True(t, jc.l.Held(), "the holder lost its lease though two of three copies hold: %v", context.Cause(jc.l.Context()))
	require.NoError(t, jc.l.Release(context.Background()))
}

// takeOver tries the key from other until it wins (the time it won) or
// held ends (the zero time).
func takeOver(ctx context.Context, other *redlock.Client, held context.Context) time.Time {
	for held.Err() == nil && ctx.Err() == nil {
		if lk, err := other.TryAcquire(ctx, "jump", 2*time.Second); err == nil {
			at := time.Now()
			_ = lk // holds it to its TTL: the holder's overlap is measured against it
			return at
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Time{}
}

// TestIntegrationClockStepBackReported: server 2's clock steps back by the
// TTL under a lease held on all three: the client reports a slow clock
// (EventNodeError, Evidence "clock_slow") at its next refresh and the
// lease goes on (copies that live longer cost no safety).
func TestIntegrationClockStepBackReported(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real redis-server processes")
	}
	r := startClockRig(t)
	jc := runJump(t, r, unsafeopt.Off{}, false, -2*time.Second)
	require.Eventually(t, func() bool {
		jc.ev.mu.Lock()
		defer jc.ev.mu.Unlock()
		return !jc.ev.slow.IsZero()
	}, 5*time.Second, 5*time.Millisecond, "the step back was not reported")
	after := jc.l.ValidUntil()
	require.Eventually(t, func() bool { return jc.l.ValidUntil().After(after) }, 5*time.Second, 5*time.Millisecond,
		"the lease is not refreshed after the step back (%v)", context.Cause(jc.l.Context()))
	detected, _ := jc.ev.at()
	require.True(t, detected.IsZero(), "a step back was reported as a jump forward")
	require.True(t, jc.l.Held())
	require.NoError(t, jc.l.Release(context.Background()))
}
