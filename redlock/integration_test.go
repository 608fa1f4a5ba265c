package redlock_test

// Integration tests against real redis-server processes (internal/testing/redistest)
// with in-process fault proxies (internal/testing/faultproxy), on the rig of
// servers_test.go. This file holds the quorum, slow-node and validity
// cases; the other integration_*_test.go files hold the safety and input
// cases.
//
// Every test waits on conditions with deadlines (require.Eventually with a
// short tick, WaitHeld), never on a fixed sleep. Time bounds asserted below
// are bounds on redlock's own timeout logic (NodeTimeout), kept an order of
// magnitude above what a run under -race on two cores needs.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/redlockx"
	"github.com/redlease/redlease/redlock"
)

const (
	// nodeTimeout is the NodeTimeout of most tests: comfortably above a
	// round trip under -race, well below the TTLs used.
	nodeTimeout = 200 * time.Millisecond
	// waitFor and pollTick bound every require.Eventually.
	waitFor  = 5 * time.Second
	pollTick = 5 * time.Millisecond
	// undoTTL is the TTL of attempts whose undo a test checks: longer than
	// any wait, so that only the undo, not expiry, can remove the key.
	undoTTL = 20 * time.Second
)

// valueCapture is a redlockx.Value option that records the value of the last attempt,
// so a test can look for it on the servers after a failed attempt.
type valueCapture struct{ ch chan string }

func newValueCapture() *valueCapture { return &valueCapture{ch: make(chan string, 16)} }

func (c *valueCapture) option() redlock.AcquireOption {
	return redlockx.Value(func(nonce string) string {
		v := "it-" + nonce
		c.ch <- v
		return v
	})
}

func (c *valueCapture) last(t *testing.T) string {
	t.Helper()
	var v string
	for {
		select {
		case v = <-c.ch:
		default:
			require.NotEmpty(t, v, "no attempt was made")
			return v
		}
	}
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

func driftOf(ttl time.Duration) time.Duration {
	return time.Duration(float64(ttl)*redlock.DefaultDriftFactor) + redlock.MinDrift
}

// TestIntegrationQuorumNodesKilled: with 0, 1 or 2 of 5 nodes killed a lock
// is acquired; with 3 it is not, and the error names every dead node's cause.
func TestIntegrationQuorumNodesKilled(t *testing.T) {
	ctx := context.Background()
	cl, c, key := startWithLocker(t)

	for down := range 4 {
		if down > 0 {
			require.NoError(t, cl.Server(down-1).Kill())
		}
		l, err := c.TryAcquire(ctx, key, undoTTL)
		if down < 3 {
			require.NoError(t, err, "%d nodes down", down)
			assert.True(t, l.Held())
			err = l.Release(ctx)
			require.NoError(t, err, "a majority deleted it: dead nodes do not hold Release up")
			live := []int{}
			for i := down; i < 5; i++ {
				live = append(live, i)
			}
			require.Eventually(t, func() bool {
				for _, v := range cl.Values(key, live...) {
					if v != "" {
						return false
					}
				}
				return true
			}, waitFor, pollTick, "the slower live nodes are released in the background")
			continue
		}
		require.ErrorIs(t, err, redlock.ErrNotAcquired)
		qe := quorumError(t, err)
		assert.Equal(t, 3, qe.Need)
		assert.LessOrEqual(t, qe.Yes, 2)
		require.Len(t, qe.Nodes, 5)
		for i := range 3 {
			nr := qe.Nodes[i]
			assert.Equal(t, cl.Server(i).Addr(), nr.Node)
			assert.Equal(t, "error", redlock.VoteOf(nr), "node %d", i)
			require.Error(t, nr.Err, "node %d", i)
			assert.False(t, isTimeout(nr.Err), "a dead node fails fast, not by timeout: %v", nr.Err)
			assert.Contains(t, err.Error(), nr.Node, "the error names every dead node")
		}
	}
	cl.waitAbsent(t, key, 3, 4) // nothing left behind: the failed attempt was undone
}

// TestIntegrationQuorumNodesPaused: SIGSTOPped nodes accept connections but
// never answer. The go-redis clients keep their default options (3s read
// timeout, 3 retries): redlock's own NodeTimeout must bound every call.
func TestIntegrationQuorumNodesPaused(t *testing.T) {
	ctx := context.Background()
	cl := startServers(t, serversConfig{n: 5, options: defaultOptions})
	c := cl.locker(t, redlock.Config{NodeTimeout: nodeTimeout})
	const goRedisReadTimeout = 3 * time.Second
	bound := min(10*nodeTimeout, goRedisReadTimeout/2)

	for paused := 1; paused <= 3; paused++ {
		require.NoError(t, cl.Server(paused-1).Pause())
		key := testKey(t) + ":" + string(rune('0'+paused))
		t0 := time.Now()
		l, err := c.TryAcquire(ctx, key, undoTTL)
		elapsed := time.Since(t0)
		assert.Less(t, elapsed, bound, "%d paused: TryAcquire took %s", paused, elapsed)
		if paused < 3 {
			require.NoError(t, err, "%d paused", paused)
			assert.True(t, l.Held())
			continue
		}
		require.ErrorIs(t, err, redlock.ErrNotAcquired)
		assert.GreaterOrEqual(t, elapsed, nodeTimeout, "a majority out of reach is only known at NodeTimeout")
		qe := quorumError(t, err)
		require.Len(t, qe.Nodes, 5)
		assert.Equal(t, 2, qe.Yes)
		for i := range 3 {
			assert.Equal(t, "error", redlock.VoteOf(qe.Nodes[i]), "node %d", i)
			assert.True(t, isTimeout(qe.Nodes[i].Err), "node %d: want a NodeTimeout, got %v", i, qe.Nodes[i].Err)
			assert.Contains(t, err.Error(), qe.Nodes[i].Node)
		}
		// The two live nodes said yes; the failed attempt is undone there.
		cl.waitAbsent(t, key, 3, 4)
	}
}

// TestIntegrationSingleNodeDirect: one node whose go-redis client cuts its
// requests at their deadline (ContextTimeoutEnabled) is asked in the
// caller's goroutine; a paused server still fails the call at NodeTimeout,
// with go-redis' other timeouts at their defaults (3s reads, 3 retries).
func TestIntegrationSingleNodeDirect(t *testing.T) {
	ctx := context.Background()
	cl := startServers(t, serversConfig{n: 1, options: func(i int, addr string) *redis.Options {
		o := defaultOptions(i, addr)
		o.ContextTimeoutEnabled = true
		return o
	}})
	c := cl.locker(t, redlock.Config{NodeTimeout: nodeTimeout})
	key := testKey(t)
	l, err := c.TryAcquire(ctx, key, undoTTL)
	require.NoError(t, err)
	assert.Positive(t, l.Token())
	err = l.Release(ctx)
	require.NoError(t, err)

	require.NoError(t, cl.Server(0).Pause())
	t0 := time.Now()
	_, err = c.TryAcquire(ctx, key, undoTTL)
	elapsed := time.Since(t0)
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	assert.True(t, isTimeout(quorumError(t, err).Nodes[0].Err), "want a NodeTimeout: %v", err)
	assert.GreaterOrEqual(t, elapsed, nodeTimeout)
	assert.Less(t, elapsed, 10*nodeTimeout, "the paused node held the caller for %s", elapsed)
	require.NoError(t, cl.Server(0).Resume())
	l, err = c.Acquire(ctx, key, undoTTL)
	require.NoError(t, err)
	err = l.Release(ctx)
	require.NoError(t, err)
}

// TestIntegrationSlowNodeDoesNotSlowAcquire: a node whose replies are held
// does not delay an acquisition that a majority already granted.
func TestIntegrationSlowNodeDoesNotSlowAcquire(t *testing.T) {
	ctx := context.Background()
	cl := startServers(t, serversConfig{n: 5, proxied: 1})
	const timeout = time.Second // long, so that returning earlier proves the early return
	c := cl.locker(t, redlock.Config{NodeTimeout: timeout})
	p := cl.Proxies[0]

	p.Hold()
	delivered := p.BytesDown()
	t0 := time.Now()
	l, err := c.TryAcquire(ctx, testKey(t), 5*time.Second)
	elapsed := time.Since(t0)
	require.NoError(t, err)
	assert.Less(t, elapsed, timeout, "did not wait for the held node")
	assert.Equal(t, delivered, p.BytesDown(), "no reply of the held node was delivered during the acquisition")
	wctx, cancel := context.WithTimeout(ctx, waitFor)
	defer cancel()
	require.NoError(t, p.WaitHeld(wctx), "the held node got the request")
	assert.GreaterOrEqual(t, p.Held(), 1, "its reply is still held")
	assert.True(t, l.Held())

	p.Release()
	err = l.Release(ctx)
	require.NoError(t, err)
	cl.waitAbsent(t, testKey(t)) // the slow node granted too, and is released too
}

// TestIntegrationValidity: latency on a majority shortens the validity by
// at least the latency; latency beyond NodeTimeout on a majority fails the
// acquisition; MinValidity turns a slow acquisition into a failure.
func TestIntegrationValidity(t *testing.T) {
	cl := &latencyRig{startServers(t, serversConfig{n: 5, proxied: 5})}

	// The delays below leave hundreds of milliseconds between what a test
	// tells apart (NodeTimeout and the latency, MinValidity and the validity
	// left), for a busy machine's scheduling under -race.
	t.Run("latency is subtracted", cl.latencySubtracted)
	t.Run("latency above NodeTimeout on a majority", cl.latencyAboveNodeTimeout)
	t.Run("MinValidity", cl.minValidity)
}

// latencyRig is five proxied servers of which the first three, a
// majority, are slowed down together.
type latencyRig struct{ *servers }

func (cl *latencyRig) setLatency(d time.Duration) {
	for _, p := range cl.Proxies[:3] {
		p.SetLatency(d)
	}
}

func (cl *latencyRig) latencySubtracted(t *testing.T) {
	ctx := context.Background()
	const ttl, d = 2 * time.Second, 100 * time.Millisecond
	c := cl.locker(t, redlock.Config{NodeTimeout: 500 * time.Millisecond})
	cl.setLatency(d)
	defer cl.setLatency(0)

	t0 := time.Now()
	key := testKey(t)
	l, err := c.TryAcquire(ctx, key, ttl)
	elapsed := time.Since(t0)
	require.NoError(t, err)
	remaining := l.Remaining()
	assert.GreaterOrEqual(t, elapsed, d, "a majority needs a delayed node")
	// validUntil = start + TTL - drift: the keys were set after the
	// start, so they outlive it; the validity left when the call
	// returns is therefore at most TTL - elapsed - drift.
	assert.False(t, l.AcquiredAt().Before(t0))
	assert.Less(t, l.AcquiredAt().Sub(t0), d, "AcquiredAt is the start of the attempt")
	assert.Equal(t, l.AcquiredAt().Add(ttl-driftOf(ttl)), l.ValidUntil())
	assert.LessOrEqual(t, remaining, ttl-driftOf(ttl)-d)
	assert.Greater(t, remaining, time.Duration(0))

	// Safety: no node's key expires before the local deadline. The
	// expiry is at most (time after PTTL returned) + PTTL + 1ms.
	held := 0
	for i, dc := range cl.Direct {
		v, _ := dc.Get(ctx, key).Result()
		if v != l.Value() {
			continue
		}
		held++
		pttl, err := dc.PTTL(ctx, key).Result()
		require.NoError(t, err)
		latest := time.Now().Add(pttl + time.Millisecond)
		assert.False(t, latest.Before(l.ValidUntil()), "node %d: key expires %s before the lock's deadline",
			i, l.ValidUntil().Sub(latest))
	}
	assert.GreaterOrEqual(t, held, 3)
	err = l.Release(ctx)
	require.NoError(t, err)
}

func (cl *latencyRig) latencyAboveNodeTimeout(t *testing.T) {
	ctx := context.Background()
	c := cl.locker(t, redlock.Config{NodeTimeout: nodeTimeout})
	const d = 3 * nodeTimeout
	cl.setLatency(d)
	defer cl.setLatency(0)
	key, cp := testKey(t), newValueCapture()

	t0 := time.Now()
	_, err := c.TryAcquire(ctx, key, undoTTL, cp.option())
	elapsed := time.Since(t0)
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	assert.Less(t, elapsed, d, "gave up at NodeTimeout, before the delayed replies")
	qe := quorumError(t, err)
	assert.Equal(t, 2, qe.Yes)
	for i := range 3 {
		assert.True(t, isTimeout(qe.Nodes[i].Err), "node %d: %v", i, qe.Nodes[i].Err)
	}
	// The delayed nodes did set the key: the undo must remove it.
	cl.waitGone(t, key, cp.last(t))
}

func (cl *latencyRig) minValidity(t *testing.T) {
	ctx := context.Background()
	const ttl, minValidity = 4 * time.Second, 3600 * time.Millisecond
	c := cl.locker(t, redlock.Config{NodeTimeout: 800 * time.Millisecond, MinValidity: minValidity})
	key, cp := testKey(t), newValueCapture()

	// Control: without latency the validity left is above MinValidity.
	l, err := c.TryAcquire(ctx, key, ttl)
	require.NoError(t, err, "control: a fast acquisition passes MinValidity")
	err = l.Release(ctx)
	require.NoError(t, err)

	// TTL - drift - latency = 4000 - 42 - 400 = 3558ms < 3600ms.
	cl.setLatency(400 * time.Millisecond)
	defer cl.setLatency(0)
	t0 := time.Now()
	_, err = c.TryAcquire(ctx, key, ttl, cp.option())
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	qe := quorumError(t, err)
	assert.Contains(t, qe.Reason, "MinValidity")
	assert.GreaterOrEqual(t, qe.Yes, 3, "a majority did grant it")
	assert.NotEmpty(t, cp.last(t))
	// Released on every node, well before the keys would expire.
	cl.waitAbsentWithin(t, time.Until(t0.Add(ttl-driftOf(ttl)))/2, key)
}

// TestIntegrationExtendTimeout: an Extend whose majority answers later than
// NodeTimeout fails; with a wait above the delay (a lock acquired with
// internal/redlockx.ExtendWait, as the lease package's are) it succeeds,
// and its new validity still counts from its start, so no node's key
// expires before the local deadline.
func TestIntegrationExtendTimeout(t *testing.T) {
	ctx := context.Background()
	cl := startServers(t, serversConfig{n: 5, proxied: 5})
	c := cl.locker(t, redlock.Config{NodeTimeout: nodeTimeout})
	const ttl = 5 * time.Second
	// A wait of 8 x NodeTimeout (1.6s) for replies 300ms late: with 4 x
	// (800ms), a clean-clone run beside two other builds saw no answer in
	// time.
	l, err := c.TryAcquire(ctx, testKey(t), ttl, redlockx.ExtendWait(8*nodeTimeout))
	require.NoError(t, err)
	plain, err := c.TryAcquire(ctx, testKey(t)+"-plain", ttl)
	require.NoError(t, err)
	short, err := c.TryAcquire(ctx, testKey(t)+"-short", ttl, redlockx.ExtendWait(nodeTimeout+10*time.Millisecond))
	require.NoError(t, err)
	for _, p := range cl.Proxies[:3] {
		p.SetLatency(nodeTimeout + 100*time.Millisecond)
	}

	// First the long wait (before a timed-out request makes go-redis dial
	// again, through the slow proxies), then NodeTimeout.
	t0 := time.Now()
	require.NoError(t, l.Extend(ctx, 0))
	elapsed := time.Since(t0)
	assert.GreaterOrEqual(t, elapsed, nodeTimeout, "the extend waited for the slow majority")
	until := l.ValidUntil()
	assert.False(t, until.Before(t0.Add(ttl-driftOf(ttl))), "validity counts from the extend's start")
	assert.False(t, until.After(time.Now().Add(ttl-driftOf(ttl))))
	// Every key that voted yes outlives the local deadline.
	for i, d := range cl.Direct[:3] {
		pttl, err := d.PTTL(ctx, testKey(t)).Result()
		require.NoError(t, err)
		assert.Greater(t, time.Now().Add(pttl), until, "server %d's key expires before the local deadline", i)
	}

	plainUntil := plain.ValidUntil()
	err = plain.Extend(ctx, 0)
	require.ErrorIs(t, err, redlock.ErrNotExtended, "a majority later than NodeTimeout")
	assert.ErrorContains(t, err, "NodeTimeout")
	require.Equal(t, plainUntil, plain.ValidUntil())

	// A wait shorter than the delay fails, naming the wait.
	shortUntil := short.ValidUntil()
	err = short.Extend(ctx, 0)
	require.ErrorIs(t, err, redlock.ErrNotExtended)
	assert.ErrorContains(t, err, "no answer within 210ms")
	require.Equal(t, shortUntil, short.ValidUntil())
}
