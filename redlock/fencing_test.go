package redlock_test

// Fencing in one round trip (docs/design.md §4.5) and counters that
// expire (§4.6), on real servers: the
// fast path, the slow path with disagreeing counters, a re-sent script,
// counters that expire, and the negative controls of both guards.

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/locktest"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/internal/testing/unsafetest"
	"github.com/redlease/redlease/internal/unsafeopt"
	"github.com/redlease/redlease/redlock"
)

var fenceCfg = redlock.Config{NodeTimeout: 200 * time.Millisecond, MaxTTL: 2 * time.Second, RetryDelay: 20 * time.Millisecond}

const fenceTTL = time.Second

// setCounter sets server i's fencing counter of key, as an earlier history
// would have left it.
func (r *servers) setCounter(t testing.TB, key string, i int, v uint64) {
	t.Helper()
	require.NoError(t, r.Direct[i].Set(context.Background(), key+":fence", v, 0).Err())
}

// counters returns every server's fencing counter of key.
func (r *servers) counters(t testing.TB, key string) []uint64 {
	t.Helper()
	var out []uint64
	for i := range r.Direct {
		out = append(out, parseCounter(t, r.counter(t, key, i)))
	}
	return out
}

// writeBacks counts the fencing write-backs (fence.lua) its clients send.
type writeBacks struct{ n atomic.Int64 }

func (w *writeBacks) DialHook(next redis.DialHook) redis.DialHook { return next }

func (w *writeBacks) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		w.count(cmd)
		return next(ctx, cmd)
	}
}

func (w *writeBacks) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			w.count(cmd)
		}
		return next(ctx, cmds)
	}
}

func (w *writeBacks) count(cmd redis.Cmder) {
	if redlock.IsScriptCall(cmd, redlock.FenceScript) {
		w.n.Add(1)
	}
}

// countedNodes are the rig's nodes with w counting their write-backs.
func (r *servers) countedNodes(t testing.TB, w *writeBacks) []redis.UniversalClient {
	nodes := r.NewNodes(t)
	for _, n := range nodes {
		n.AddHook(w)
	}
	return nodes
}

// TestFencingFastPath: nodes whose counters agree hand out the token in the
// acquisition's one round trip: every node's counter is the token, grows by
// one per acquisition, and no write-back is sent.
func TestFencingFastPath(t *testing.T) {
	rig := startKillable(t, 3, redistest.Options{})
	var w writeBacks
	// A node whose grant missed NodeTimeout (a loaded machine) lags one
	// behind and makes a later majority disagree: a long NodeTimeout
	// keeps every node's grant in time.
	cfg := fenceCfg
	cfg.NodeTimeout = 2 * time.Second
	cfg.MaxTTL = 10 * time.Second
	c := locktest.New(t, cfg, rig.countedNodes(t, &w), true)
	key := testKey(t)
	last := uint64(0)
	for i := range 5 {
		last = issueTokens(t, c, key, 5*time.Second, 1, last)
		assert.Equal(t, uint64(i+1), last, "counters that agree grow by one per acquisition")
		// Acquire returns at a majority: the third node's grant may land
		// a moment later.
		require.Eventually(t, func() bool {
			cs := rig.counters(t, key)
			return cs[0] == last && cs[1] == last && cs[2] == last
		}, 5*time.Second, attemptTick, "every node's counter is the token: %v, token %d", rig.counters(t, key), last)
		// And the straggler's copy released, or the next acquisition finds
		// it there, that node votes no, and its counter falls behind.
		waitReleased(t, rig, key)
	}
	assert.Zero(t, w.n.Load(), "the fast path sends no write-back")
}

// TestFencingSlowPath: counters that disagree (failed attempts, a restarted
// node) make the token the highest counter + 1, written back to the nodes
// below it before it is handed out; the next acquisition takes the fast
// path again.
func TestFencingSlowPath(t *testing.T) {
	rig := startKillable(t, 3, redistest.Options{})
	var w writeBacks
	c := locktest.New(t, fenceCfg, rig.countedNodes(t, &w), true)
	key := testKey(t)
	rig.setCounter(t, key, 0, 5)
	rig.setCounter(t, key, 1, 7)
	rig.setCounter(t, key, 2, 3)

	l, err := c.Acquire(context.Background(), key, fenceTTL)
	require.NoError(t, err)
	// The grants are 6, 8 and 4: every majority disagrees, so the token is
	// its highest grant (8 with node 1 in it, else 6), written back to the
	// others of that majority before it was handed out.
	assert.Contains(t, []uint64{6, 8}, l.Token(), "the token is the highest grant of the first majority")
	assert.Positive(t, w.n.Load(), "disagreeing counters take the slow path")
	held := 0
	for _, v := range rig.counters(t, key) {
		if v >= l.Token() {
			held++
		}
	}
	assert.GreaterOrEqual(t, held, 2, "a majority holds the token before it is handed out")
	err = l.Release(context.Background())
	require.NoError(t, err)
	issueTokens(t, c, key, fenceTTL, 5, l.Token())
}

// TestFencingResentScriptDoesNotIncrement: a go-redis retry may run the
// acquire script twice for one attempt; the second run finds our value and
// replies the counter unchanged.
func TestFencingResentScriptDoesNotIncrement(t *testing.T) {
	rig := startKillable(t, 1, redistest.Options{})
	ctx := context.Background()
	key := testKey(t)
	run := func() []any {
		res, err := redlock.RunAcquireScript(ctx, rig.Direct[0], key, "attempt-1", fenceTTL, fenceCfg.MaxTTL)
		require.NoError(t, err)
		return res
	}
	locktest.New(t, fenceCfg, rig.NewNodes(t), true) // a marker that votes
	first, second := run(), run()
	assert.EqualValues(t, 1, first[0], "granted: %v", first)
	assert.EqualValues(t, 1, second[0], "ours again: %v", second)
	assert.Equal(t, first[1], second[1], "the re-sent script replies the same counter")
	assert.Equal(t, "1", rig.counter(t, key, 0), "and the counter was incremented once")
}

// fenceHoleSetup leaves node 0 with a counter far above the others': the
// acquisition's grants are 11 (node 0) and 2 (nodes 1 and 2). Client A
// takes the lock; then node 0 is held by another client, so that client B's
// majority is nodes 1 and 2 alone.
func fenceHoleSetup(t *testing.T, cfg redlock.Config) (a, b *redlock.Lock) {
	rig := startKillable(t, 3, redistest.Options{})
	key := testKey(t)
	rig.setCounter(t, key, 0, 10)
	rig.setCounter(t, key, 1, 1)
	rig.setCounter(t, key, 2, 1)
	c := locktest.New(t, cfg, rig.NewNodes(t), true)
	ctx := context.Background()
	// Wait for every node's grant: with node 0 among the first majority
	// the token is 11 whatever the path.
	var err error
	for range 20 {
		a, err = c.Acquire(ctx, key, fenceTTL)
		require.NoError(t, err)
		if a.Token() == 11 {
			break
		}
		_ = a.Release(ctx)
		waitReleased(t, rig, key)
		rig.setCounter(t, key, 0, 10)
		rig.setCounter(t, key, 1, 1)
		rig.setCounter(t, key, 2, 1)
	}
	require.Equal(t, uint64(11), a.Token(), "node 0 never was in the first majority")
	err = a.Release(ctx)
	require.NoError(t, err)
	waitReleased(t, rig, key)
	rig.setForeign(t, key, 0)
	b, err = c.Acquire(ctx, key, fenceTTL)
	require.NoError(t, err)
	return a, b
}

// waitReleased waits until no server holds key.
func waitReleased(t *testing.T, rig *servers, key string) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, d := range rig.Direct {
			if d.Exists(context.Background(), key).Val() != 0 {
				return false
			}
		}
		return true
	}, 5*time.Second, attemptTick)
}

// TestFencingMajorityRule: B's majority (nodes 1 and 2) never saw node 0's
// grant of 11 directly, but A's token reached a majority before it was
// handed out, so B's token is above it (docs/design.md S5).
func TestFencingMajorityRule(t *testing.T) {
	a, b := fenceHoleSetup(t, fenceCfg)
	assert.Greater(t, b.Token(), a.Token(), "fencing token went backwards")
}

// TestFencingMajorityRuleControl is the negative control of
// TestFencingMajorityRule: handing the token out when fewer than a majority
// replied it (the fast path without its rule) lets B's token go back.
func TestFencingMajorityRuleControl(t *testing.T) {
	cfg := fenceCfg
	unsafetest.TurnOff(t, &cfg, unsafeopt.Off{FastPathMinority: true})
	a, b := fenceHoleSetup(t, cfg)
	assert.LessOrEqual(t, b.Token(), a.Token(), "without the majority rule the token goes back")
}

// TestInspectTokenWithPausedNode: the case of issue #32 on real servers.
// One node's counter lags 20 behind the others' (it was paused or
// restarted earlier) and its grant comes last: the two others' grants, 42,
// make the fast path hand out 42, and the lagging node's grant leaves 22
// with the holder's value. Each node in turn is paused (SIGSTOP) and a
// majority read must report exactly the holder's token; three runs, a
// different node lagging in each.
func TestInspectTokenWithPausedNode(t *testing.T) {
	rig := startKillable(t, 3, redistest.Options{})
	cfg := fenceCfg
	cfg.MaxTTL = 10 * time.Second
	nodes := rig.NewNodes(t)
	gates := make([]*redlock.AcquireGate, len(nodes))
	for i, n := range nodes {
		gates[i] = &redlock.AcquireGate{}
		n.AddHook(gates[i])
	}
	c := locktest.New(t, cfg, nodes, true)
	t.Cleanup(rig.Heal)
	ctx := context.Background()
	for run := range 3 {
		key := fmt.Sprintf("%s:%d", testKey(t), run)
		lagging := (run + 1) % 3
		for i := range 3 {
			rig.setCounter(t, key, i, 41)
		}
		rig.setCounter(t, key, lagging, 21)
		open := gates[lagging].Hold()
		l, err := c.Acquire(ctx, key, 5*time.Second)
		open()
		require.NoError(t, err)
		require.Equal(t, uint64(42), l.Token(), "the two nodes that agree: the fast path")
		rig.waitHeld(t, key, l.Value()) // the lagging node's late grant included
		require.Equal(t, uint64(22), parseCounter(t, rig.counter(t, key, lagging)), "the lagging node keeps its grant")
		for paused := range 3 {
			in := inspectPaused(t, rig, c, key, paused)
			assert.Equal(t, l.Value(), in.Value, "run %d, node %d paused", run, paused)
			assert.Equal(t, l.Token(), in.Token, "run %d, node %d paused: the holder's token", run, paused)
		}
		err = l.Release(ctx)
		require.NoError(t, err)
	}
}

// inspectPaused is c's Inspect of key while server paused is stopped
// (SIGSTOP): a majority read with that node silent.
func inspectPaused(t *testing.T, rig *servers, c *redlock.Client, key string, paused int) *redlock.Inspection {
	t.Helper()
	require.NoError(t, rig.Server(paused).Pause())
	in, err := c.Inspect(context.Background(), key)
	require.NoError(t, rig.Server(paused).Resume())
	require.NoError(t, err, "node %d paused", paused)
	return in
}

// lateSpare acquires key with node late's grant held until the acquisition
// returned, its counter at 50 and the others' at 41: the fast path hands
// out 42 and node late grants 51 after it, a spare above the token. It
// returns once every node holds the lock's value.
func lateSpare(t *testing.T, rig *servers, c *redlock.Client, gates []*redlock.AcquireGate, key string, late int) *redlock.Lock {
	t.Helper()
	for i := range rig.Direct {
		rig.setCounter(t, key, i, 41)
	}
	rig.setCounter(t, key, late, 50)
	open := gates[late].Hold()
	l, err := c.Acquire(context.Background(), key, 5*time.Second)
	open()
	require.NoError(t, err)
	require.Equal(t, uint64(42), l.Token(), "the two nodes that agree: the fast path")
	rig.waitHeld(t, key, l.Value()) // the late grant included
	return l
}

// gatedClient is a Client over 3 killable servers (MaxTTL 10s) whose
// acquire requests each node can hold (see lateSpare).
func gatedClient(t *testing.T, off unsafeopt.Off) (*servers, *redlock.Client, []*redlock.AcquireGate) {
	rig := startKillable(t, 3, redistest.Options{})
	cfg := fenceCfg
	cfg.MaxTTL = 10 * time.Second
	unsafetest.TurnOff(t, &cfg, off)
	nodes := rig.NewNodes(t)
	gates := make([]*redlock.AcquireGate, len(nodes))
	for i, n := range nodes {
		gates[i] = &redlock.AcquireGate{}
		n.AddHook(gates[i])
	}
	t.Cleanup(rig.Heal)
	return rig, locktest.New(t, cfg, nodes, true), gates
}

// TestLateSpareSettled: a spare granted after the acquisition returned with
// a counter above the token (51 against 42) keeps its copy, and its counter
// is lowered to exactly the token (settle.lua), its TTL and the node's
// high-water mark kept; then a majority read reports the token with any
// node paused (docs/design.md §4.4, §4.5). Three runs, each node late once.
func TestLateSpareSettled(t *testing.T) {
	rig, c, gates := gatedClient(t, unsafeopt.Off{})
	ctx := context.Background()
	for late := range 3 {
		key := fmt.Sprintf("%s:%d", testKey(t), late)
		l := lateSpare(t, rig, c, gates, key, late)
		require.Eventually(t, func() bool { return rig.counter(t, key, late) == "42" }, 5*time.Second, attemptTick,
			"node %d: the late spare's counter is lowered to the token", late)
		assert.Equal(t, l.Value(), rig.Direct[late].Get(ctx, key).Val(), "node %d keeps its copy", late)
		assert.Equal(t, "51", rig.Direct[late].HGet(ctx, markerKey, "h").Val(), "node %d: h untouched", late)
		assert.Greater(t, rig.Direct[late].PTTL(ctx, key+":fence").Val(), 50*time.Second, "node %d: the counter's TTL kept", late)
		for paused := range 3 {
			in := inspectPaused(t, rig, c, key, paused)
			assert.Equal(t, l.Value(), in.Value, "late %d, node %d paused", late, paused)
			assert.Equal(t, l.Token(), in.Token, "late %d, node %d paused: the holder's token", late, paused)
		}
		err := l.Release(ctx)
		require.NoError(t, err)
	}
}

// TestLateSpareSettledControl is the negative control of
// TestLateSpareSettled: without the settle (unsafeopt NoSettle) the spare
// keeps 51, and a read with either of the token's nodes paused reports 51.
func TestLateSpareSettledControl(t *testing.T) {
	rig, c, gates := gatedClient(t, unsafeopt.Off{NoSettle: true})
	ctx := context.Background()
	key, late := testKey(t), 2
	l := lateSpare(t, rig, c, gates, key, late)
	require.Equal(t, "51", rig.counter(t, key, late), "the late grant, not settled")
	for paused := range 2 { // the token's nodes
		in := inspectPaused(t, rig, c, key, paused)
		assert.Equal(t, uint64(51), in.Token, "node %d paused: without the settle the spare's counter qualifies", paused)
	}
	err := l.Release(ctx)
	require.NoError(t, err)
}
