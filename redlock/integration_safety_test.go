package redlock_test

// Integration tests of the safety invariants that need real servers:
// no resurrection (docs/design.md S4), undo of failed attempts (S8) and forgetful nodes
// (S5, S6).

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/locktest"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/redlock"
)

// TestIntegrationNoResurrection: Extend never re-creates a key that expired
// or was deleted (docs/design.md S4).
func TestIntegrationNoResurrection(t *testing.T) {
	ctx := context.Background()
	cl := startServers(t, serversConfig{n: 5})
	c := cl.locker(t, redlock.Config{NodeTimeout: 400 * time.Millisecond})

	t.Run("expired", func(t *testing.T) {
		key := testKey(t)
		l, err := c.TryAcquire(ctx, key, time.Second)
		require.NoError(t, err)
		cl.waitAbsent(t, key) // expired on every server
		assert.False(t, l.Held(), "the local deadline comes before the keys expire")

		err = l.Extend(ctx, 0)
		require.ErrorIs(t, err, redlock.ErrNotHeld)
		assert.Equal(t, []string{"", "", "", "", ""}, cl.Values(key), "Extend re-created a key")
		n, err := cl.Direct[0].Exists(ctx, key).Result()
		require.NoError(t, err)
		assert.Zero(t, n)
	})

	t.Run("deleted on a majority", func(t *testing.T) {
		key := testKey(t)
		l, err := c.TryAcquire(ctx, key, 5*time.Second)
		require.NoError(t, err)
		until := l.ValidUntil()
		// TryAcquire returns at a majority: a straggler's SET could land
		// after the deletes below and make the majority whole again.
		cl.waitHeld(t, key, l.Value())
		for i := range 3 {
			require.NoError(t, cl.Direct[i].Del(ctx, key).Err())
		}

		err = l.Extend(ctx, 0)
		require.ErrorIs(t, err, redlock.ErrNotExtended)
		qe := quorumError(t, err)
		assert.LessOrEqual(t, qe.Yes, 2) // it stops counting once 3 said no
		for i := range 3 {
			assert.Equal(t, "no", redlock.VoteOf(qe.Nodes[i]), "node %d", i)
		}
		assert.Equal(t, []string{"", "", "", l.Value(), l.Value()}, cl.Values(key),
			"Extend re-created a deleted key")
		assert.True(t, l.Held(), "a failed extend keeps the previous deadline")
		assert.Equal(t, until, l.ValidUntil())

		// Deleted everywhere: still nothing is re-created.
		for i := 3; i < 5; i++ {
			require.NoError(t, cl.Direct[i].Del(ctx, key).Err())
		}
		require.ErrorIs(t, l.Extend(ctx, 0), redlock.ErrNotExtended)
		assert.Equal(t, []string{"", "", "", "", ""}, cl.Values(key))
	})
}

// TestIntegrationFailedAttemptUndone: an attempt that got yes from a
// minority releases it there (docs/design.md S8).
func TestIntegrationFailedAttemptUndone(t *testing.T) {
	ctx := context.Background()
	cl := startServers(t, serversConfig{n: 5})
	c := cl.locker(t, redlock.Config{NodeTimeout: nodeTimeout})
	key, cp := testKey(t), newValueCapture()
	cl.setForeign(t, key, 0, 1, 2)

	_, err := c.TryAcquire(ctx, key, undoTTL, cp.option())
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	qe := quorumError(t, err)
	assert.LessOrEqual(t, qe.Yes, 2)
	for i := range 3 {
		assert.Equal(t, "no", redlock.VoteOf(qe.Nodes[i]), "node %d", i)
	}
	cl.waitGone(t, key, cp.last(t))
	cl.waitAbsent(t, key, 3, 4)
	assert.Equal(t, []string{"foreign-holder", "foreign-holder", "foreign-holder"}, cl.Values(key, 0, 1, 2),
		"the undo only deletes our own value")
}

// TestIntegrationCancelledAttemptUndone: the caller cancels its context
// while a majority's replies are held. The attempt fails with the context's
// error, and once the held replies arrive, the late yes votes are undone
// with redlock's own context, not the caller's cancelled one (docs/design.md S8).
//
// Nodes 0-2 sit behind held proxies and have one connection each (PoolSize
// 1), busy with the held acquire: the background release of the failed
// attempt cannot reach them before its NodeTimeout ends, so once that has
// passed only the late-yes undo can clean them.
func TestIntegrationCancelledAttemptUndone(t *testing.T) {
	cl := startSingleConnServers(t)
	const timeout = time.Second // long, so that the cancel comes first
	c := cl.locker(t, redlock.Config{NodeTimeout: timeout})
	key, cp := testKey(t), newValueCapture()
	held := cl.Proxies[:3]
	for _, p := range held {
		p.Hold()
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		err error
		at  time.Time
	}
	done := make(chan result, 1)
	go func() {
		_, err := c.TryAcquire(ctx, key, undoTTL, cp.option())
		done <- result{err, time.Now()}
	}()
	wctx, wcancel := context.WithTimeout(context.Background(), waitFor)
	defer wcancel()
	for _, p := range held {
		require.NoError(t, p.WaitHeld(wctx))
	}
	value := cp.last(t)
	assert.Equal(t, []string{value, value, value}, cl.Values(key, 0, 1, 2), "the held nodes granted")
	cancelled := time.Now()
	cancel()

	var r result
	select {
	case r = <-done:
	case <-wctx.Done():
		require.FailNow(t, "TryAcquire did not return after its context was cancelled")
	}
	require.ErrorIs(t, r.err, redlock.ErrNotAcquired)
	require.ErrorIs(t, r.err, context.Canceled)
	assert.Less(t, r.at.Sub(cancelled), timeout, "returned at the cancel, not at NodeTimeout")
	qe := quorumError(t, r.err)
	for i := range 3 {
		assert.ErrorIs(t, qe.Nodes[i].Err, context.Canceled, "node %d", i)
	}

	// The direct nodes are undone by the background release, started
	// before TryAcquire returned. On the held nodes it gives up at its
	// NodeTimeout: wait until that has certainly passed (the give-up is not
	// observable from outside), then check it did not reach them.
	cl.waitGone(t, key, value, 3, 4)
	gaveUp := time.NewTimer(time.Until(r.at.Add(timeout + 200*time.Millisecond)))
	<-gaveUp.C
	assert.Equal(t, []string{value, value, value}, cl.Values(key, 0, 1, 2), "still held: only the late replies can undo it")

	for _, p := range held {
		p.Release()
	}
	cl.waitGone(t, key, value) // the late yes votes were undone
}

// startSingleConnServers starts five servers, nodes 0-2 behind proxies
// with one connection each and a long read timeout.
func startSingleConnServers(t *testing.T) *servers {
	return startServers(t, serversConfig{n: 5, proxied: 3, options: func(i int, addr string) *redis.Options {
		o := fastOptions(i, addr)
		if i < 3 {
			o.PoolSize, o.ReadTimeout = 1, 10*time.Second // the held reply must not time out
		}
		return o
	}})
}

// forgetful is the set-up of the forgetful-node tests: three servers, client
// A holds key on nodes 0 and 1 (node 2 refused: held by another client,
// which then lets go), and node 1 is killed and restarted empty while A
// still holds. B is a second client, made after the restart without
// Bootstrap (that would be an operator's mistake after a crash); it starts
// node 1's quarantine.
type forgetful struct {
	cl  *servers
	cfg redlock.Config
	a   *redlock.Lock
	b   *redlock.Client
	key string
}

const (
	forgetfulMaxTTL = 2 * time.Second
	forgetfulTTL    = 1500 * time.Millisecond
)

func newForgetful(t *testing.T, disableQuarantine bool) *forgetful {
	ctx := context.Background()
	cl := startServers(t, serversConfig{n: 3})
	cfg := redlock.Config{NodeTimeout: nodeTimeout, MaxTTL: forgetfulMaxTTL, RetryDelay: 50 * time.Millisecond,
		DisableQuarantine: disableQuarantine}
	a := cl.locker(t, cfg)
	f := &forgetful{cl: cl, cfg: cfg, key: testKey(t)}

	cl.setForeign(t, f.key, 2)
	var err error
	f.a, err = a.TryAcquire(ctx, f.key, forgetfulTTL)
	require.NoError(t, err)
	require.Equal(t, []string{f.a.Value(), f.a.Value(), "foreign-holder"}, cl.Values(f.key))
	cl.freeAfter(t, f.a, f.key, 2)

	s := cl.Server(1)
	require.NoError(t, s.Kill())
	require.NoError(t, s.Restart(true))
	require.Equal(t, []string{f.a.Value(), "", ""}, cl.Values(f.key), "node 1 forgot")

	var nodes []redis.UniversalClient
	for i, s := range cl.Servers() {
		nodes = append(nodes, redistest.NewClient(t, fastOptions(i, s.Addr())))
	}
	f.b = locktest.New(t, cfg, nodes, false)
	require.True(t, f.a.Held(), "the set-up took longer than A's validity")
	return f
}

// TestIntegrationForgetfulNodeQuarantined: a node that restarted empty
// does not vote for MaxTTL (docs/design.md S6), so B cannot take the lock A holds; once the
// quarantine is over, tokens continue above A's (S5).
func TestIntegrationForgetfulNodeQuarantined(t *testing.T) {
	ctx := context.Background()
	f := newForgetful(t, false)
	restarted := f.cl.Server(1).Addr()

	_, err := f.b.TryAcquire(ctx, f.key, forgetfulTTL)
	aHeld := f.a.Held()
	require.ErrorIs(t, err, redlock.ErrNotAcquired, "B won the lock A holds")
	require.True(t, aHeld, "A's validity ended before the contest: the test proves nothing")
	qe := quorumError(t, err)
	q := redlock.QuarantinedNodes(qe)
	require.Len(t, q, 1, "%v", err)
	assert.Equal(t, restarted, q[0].Node)
	assert.Greater(t, q[0].Quarantine, time.Duration(0))
	assert.LessOrEqual(t, q[0].Quarantine, forgetfulMaxTTL)

	in, err := f.b.Inspect(ctx, f.key)
	require.ErrorIs(t, err, redlock.ErrNoHolder, "A's value is on one healthy node only")
	require.Len(t, in.Nodes, 3)
	assert.Greater(t, in.Nodes[1].Quarantine, time.Duration(0))
	assert.Zero(t, in.Nodes[0].Quarantine)

	// After the quarantine, B acquires on nodes 1 and 2 only (node 0 is held
	// by another client): node 1 forgot A's token, yet B's must be higher.
	err = f.a.Release(ctx)
	require.NoError(t, err)
	f.cl.setForeign(t, f.key, 0)
	actx, cancel := context.WithTimeout(ctx, forgetfulMaxTTL+waitFor)
	defer cancel()
	l, err := f.b.Acquire(actx, f.key, forgetfulTTL)
	require.NoError(t, err)
	assert.Greater(t, l.Token(), f.a.Token(), "fencing token went backwards after a forgetful node")
	assert.Equal(t, []string{"foreign-holder", l.Value(), l.Value()}, f.cl.Values(f.key))
	counter, err := f.cl.Direct[1].Get(ctx, f.key+":fence").Result()
	require.NoError(t, err)
	assert.Equal(t, strconv.FormatUint(l.Token(), 10), counter)
}

// TestIntegrationForgetfulNodeWithoutQuarantine is the negative control of
// TestIntegrationForgetfulNodeQuarantined: with quarantine off, the same
// scenario grants the lock twice, and the token repeats.
func TestIntegrationForgetfulNodeWithoutQuarantine(t *testing.T) {
	f := newForgetful(t, true)

	l, err := f.b.TryAcquire(context.Background(), f.key, forgetfulTTL)
	require.NoError(t, err, "without quarantine, the forgetful node votes at once")
	assert.True(t, f.a.Held() && l.Held(), "A and B both hold the lock: the double grant quarantine prevents")
	assert.LessOrEqual(t, l.Token(), f.a.Token(), "and fencing tokens repeat")
}

// TestIntegrationForgetfulNodeFloorNeedsHealthyMajority: node 0 forgot A's
// token and node 1, the only other node that knows it, does not answer.
// When node 0's quarantine ends it must not vote with a fencing floor read
// from node 2 alone (docs/design.md §4.9: its floor comes from a healthy
// majority before it votes again), or the next token repeats A's.
func TestIntegrationForgetfulNodeFloorNeedsHealthyMajority(t *testing.T) {
	t.Parallel() // servers of its own, and no timing bound in what it checks
	ctx := context.Background()
	cl := startServers(t, serversConfig{n: 3})
	cfg := redlock.Config{NodeTimeout: nodeTimeout, MaxTTL: forgetfulMaxTTL, RetryDelay: 50 * time.Millisecond}
	a := cl.locker(t, cfg)
	key := testKey(t)

	cl.setForeign(t, key, 2)
	// Acquire, not one attempt: the set-up only needs A to hold on nodes 0
	// and 1, and one attempt found all three silent past the 200ms
	// NodeTimeout (a clean-clone make test at -p 3 under a busy core).
	setup, cancelSetup := context.WithTimeout(ctx, 5*time.Second)
	la, err := a.Acquire(setup, key, forgetfulTTL)
	cancelSetup()
	require.NoError(t, err)
	cl.freeAfter(t, la, key, 2)
	require.NoError(t, cl.Server(0).Kill())
	require.NoError(t, cl.Server(0).Restart(true))
	require.NoError(t, cl.Server(1).Pause()) // resumed by cl.heal on cleanup

	var nodes []redis.UniversalClient
	for i, s := range cl.Servers() {
		nodes = append(nodes, redistest.NewClient(t, fastOptions(i, s.Addr())))
	}
	b := locktest.New(t, cfg, nodes, false)
	t.Cleanup(cl.Heal) // before b.Close, which waits for requests to the paused node
	// Node 0's quarantine started at New; the deadline leaves B many
	// attempts after it ends.
	actx, cancel := context.WithTimeout(ctx, forgetfulMaxTTL+700*time.Millisecond)
	defer cancel()
	lb, err := b.Acquire(actx, key, forgetfulTTL)
	if err == nil {
		assert.Greater(t, lb.Token(), la.Token(),
			"token %d handed out after token %d: node 0's floor was raised without a healthy majority", lb.Token(), la.Token())
		return
	}
	require.ErrorIs(t, err, context.DeadlineExceeded, "fail closed until a healthy majority answers")
}
