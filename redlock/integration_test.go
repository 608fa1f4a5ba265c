package redlock_test

// Integration tests against real redis-server processes (internal/redistest)
// with in-process fault proxies (internal/faultproxy). This file holds the
// shared helpers and the quorum, slow-node and validity cases; the other
// integration_*_test.go files hold the safety and input cases.
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

	"github.com/redlease/redlease/internal/testnodes"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/faultproxy"
	"github.com/redlease/redlease/internal/redistest"
	"github.com/redlease/redlease/internal/redlockx"
	"github.com/redlease/redlease/redlock"
)

const (
	// itNodeTimeout is the NodeTimeout of most tests: comfortably above a
	// round trip under -race, well below the TTLs used.
	itNodeTimeout = 200 * time.Millisecond
	// itWaitFor and itTick bound every require.Eventually.
	itWaitFor = 5 * time.Second
	itTick    = 5 * time.Millisecond
	// itUndoTTL is the TTL of attempts whose undo a test checks: longer than
	// any wait, so that only the undo, not expiry, can remove the key.
	itUndoTTL = 20 * time.Second
)

// itCluster is N real redis-servers, each reachable by the Client under test
// (nodes, possibly through a fault proxy) and by a direct client used only
// to set up and check state.
type itCluster struct {
	g       *redistest.Group
	direct  []*redis.Client         // straight to server i; never used by a redlock.Client
	proxies []*faultproxy.Proxy     // proxies[i] fronts server i; nil when node i is direct
	nodes   []redis.UniversalClient // node i of the Client under test
}

type itConfig struct {
	n       int // servers, one node each
	proxied int // nodes 0..proxied-1 go through a faultproxy
	// options makes node i's go-redis options; default itFastOptions.
	options func(i int, addr string) *redis.Options
	redis   redistest.Options
}

// itFastOptions are go-redis options for nodes that get paused, killed or
// delayed: short socket timeouts and no retries, so that requests still in
// flight when a call returns end quickly (Client.Close waits for them).
// Redlock's own NodeTimeout is what bounds the calls; these only bound the
// stragglers.
func itFastOptions(_ int, addr string) *redis.Options {
	return &redis.Options{
		Addr:         addr,
		DialTimeout:  250 * time.Millisecond,
		ReadTimeout:  time.Second,
		WriteTimeout: time.Second,
		PoolTimeout:  time.Second,
		MaxRetries:   -1,
		// One dial per request: go-redis otherwise re-dials a dead server
		// five times, 100ms apart, and the cause seen is a timeout.
		DialerRetries: 1,
	}
}

// itDefaultOptions are go-redis' defaults (5s dial, 3s read timeouts, 3
// retries): redlock must not depend on the caller's client options.
func itDefaultOptions(_ int, addr string) *redis.Options {
	return &redis.Options{Addr: addr}
}

func itStart(t *testing.T, cc itConfig) *itCluster {
	t.Helper()
	if cc.options == nil {
		cc.options = itFastOptions
	}
	cl := &itCluster{g: redistest.Start(t, cc.n, cc.redis)}
	for i, s := range cl.g.Servers() {
		cl.direct = append(cl.direct, itRedis(t, itFastOptions(i, s.Addr())))
		addr := s.Addr()
		var p *faultproxy.Proxy
		if i < cc.proxied {
			var err error
			p, err = faultproxy.New(addr)
			require.NoError(t, err)
			t.Cleanup(func() { _ = p.Close() })
			addr = p.Addr()
		}
		cl.proxies = append(cl.proxies, p)
		cl.nodes = append(cl.nodes, itRedis(t, cc.options(i, addr)))
	}
	return cl
}

// itRedis makes a go-redis client closed on cleanup.
func itRedis(t *testing.T, o *redis.Options) *redis.Client {
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// locker makes a bootstrapped Client over the cluster's nodes. Faults are
// healed on cleanup before the Client is closed, so that Close does not wait
// for requests stuck on a paused server or a held proxy.
func (cl *itCluster) locker(t *testing.T, cfg redlock.Config) *redlock.Client {
	t.Helper()
	c := itLocker(t, cfg, cl.nodes, true)
	t.Cleanup(cl.heal)
	return c
}

// heal lifts every fault: proxies forward again, paused servers continue.
func (cl *itCluster) heal() {
	for _, p := range cl.proxies {
		if p != nil {
			p.Release()
			p.SetLatency(0)
			p.Heal()
			p.Enable()
		}
	}
	for _, s := range cl.g.Servers() {
		if s.Running() {
			_ = s.Resume() // SIGCONT; harmless on a server that is not paused
		}
	}
}

// itLocker makes a Client over nodes, closed on cleanup, logging to t.Log;
// bootstrap declares the nodes brand new (no quarantine wait).
func itLocker(t *testing.T, cfg redlock.Config, nodes []redis.UniversalClient, bootstrap bool) *redlock.Client {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = itLogger(t)
	}
	c, err := redlock.New(context.Background(), cfg, nodes...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	if bootstrap {
		require.NoError(t, c.Bootstrap(context.Background()))
	}
	return c
}

func itLogger(t *testing.T) hclog.Logger { return testnodes.Logger(t, hclog.Debug) }

// itKey is a key unique to the test.
func itKey(t *testing.T) string { return "it:" + t.Name() }

// values reads key on every server directly: "" where it is absent or the
// server does not answer.
func (cl *itCluster) values(key string, servers ...int) []string {
	if len(servers) == 0 {
		for i := range cl.direct {
			servers = append(servers, i)
		}
	}
	out := make([]string, len(servers))
	for j, i := range servers {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		out[j], _ = cl.direct[i].Get(ctx, key).Result()
		cancel()
	}
	return out
}

// waitGone waits until none of the given servers (all by default) holds
// value under key.
func (cl *itCluster) waitGone(t *testing.T, key, value string, servers ...int) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, v := range cl.values(key, servers...) {
			if v == value {
				return false
			}
		}
		return true
	}, itWaitFor, itTick, "value %q of %q still on a node", value, key)
}

// waitAbsent waits until key exists on none of the given servers (all by
// default).
func (cl *itCluster) waitAbsent(t *testing.T, key string, servers ...int) {
	t.Helper()
	cl.waitAbsentWithin(t, itWaitFor, key, servers...)
}

func (cl *itCluster) waitAbsentWithin(t *testing.T, within time.Duration, key string, servers ...int) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, v := range cl.values(key, servers...) {
			if v != "" {
				return false
			}
		}
		return true
	}, within, itTick, "%q still on a node", key)
}

// waitHeld waits until every server holds value under key: a call that
// returned at a majority may still have requests landing on the others.
func (cl *itCluster) waitHeld(t *testing.T, key, value string) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, v := range cl.values(key) {
			if v != value {
				return false
			}
		}
		return true
	}, itWaitFor, itTick, "value %q of %q not on every node", value, key)
}

// setForeign makes key held by another client on the given servers.
func (cl *itCluster) setForeign(t *testing.T, key string, servers ...int) {
	t.Helper()
	for _, i := range servers {
		require.NoError(t, cl.direct[i].Set(context.Background(), key, "foreign-holder", time.Minute).Err())
	}
}

// itCapture is a WithValue option that records the value of the last attempt,
// so a test can look for it on the servers after a failed attempt.
type itCapture struct{ ch chan string }

func itNewCapture() *itCapture { return &itCapture{ch: make(chan string, 16)} }

func (c *itCapture) option() redlock.AcquireOption {
	return redlock.WithValue(func(nonce string) string {
		v := "it-" + nonce
		c.ch <- v
		return v
	})
}

func (c *itCapture) last(t *testing.T) string {
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

func itQuorumError(t *testing.T, err error) *redlock.QuorumError {
	t.Helper()
	var qe *redlock.QuorumError
	require.ErrorAs(t, err, &qe)
	return qe
}

func itIsTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

func itDrift(ttl time.Duration) time.Duration {
	return time.Duration(float64(ttl)*redlock.DefaultDriftFactor) + redlock.MinDrift
}

// TestIntegrationQuorumNodesKilled: with 0, 1 or 2 of 5 nodes killed a lock
// is acquired; with 3 it is not, and the error names every dead node's cause.
func TestIntegrationQuorumNodesKilled(t *testing.T) {
	ctx := context.Background()
	cl := itStart(t, itConfig{n: 5})
	c := cl.locker(t, redlock.Config{NodeTimeout: itNodeTimeout})
	key := itKey(t)

	for down := range 4 {
		if down > 0 {
			require.NoError(t, cl.g.Server(down-1).Kill())
		}
		l, err := c.TryAcquire(ctx, key, itUndoTTL)
		if down < 3 {
			require.NoError(t, err, "%d nodes down", down)
			assert.True(t, l.Held())
			n, err := l.Release(ctx)
			require.NoError(t, err, "a majority deleted it: dead nodes do not hold Release up")
			assert.GreaterOrEqual(t, n, 3, "Release returns once a majority deleted")
			live := []int{}
			for i := down; i < 5; i++ {
				live = append(live, i)
			}
			require.Eventually(t, func() bool {
				for _, v := range cl.values(key, live...) {
					if v != "" {
						return false
					}
				}
				return true
			}, itWaitFor, itTick, "the slower live nodes are released in the background")
			continue
		}
		require.ErrorIs(t, err, redlock.ErrNotAcquired)
		qe := itQuorumError(t, err)
		assert.Equal(t, 3, qe.Need)
		assert.LessOrEqual(t, qe.Yes, 2)
		require.Len(t, qe.Nodes, 5)
		for i := range 3 {
			nr := qe.Nodes[i]
			assert.Equal(t, cl.g.Server(i).Addr(), nr.Node)
			assert.Equal(t, redlock.VoteError, nr.Vote, "node %d", i)
			require.Error(t, nr.Err, "node %d", i)
			assert.False(t, itIsTimeout(nr.Err), "a dead node fails fast, not by timeout: %v", nr.Err)
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
	cl := itStart(t, itConfig{n: 5, options: itDefaultOptions})
	c := cl.locker(t, redlock.Config{NodeTimeout: itNodeTimeout})
	const goRedisReadTimeout = 3 * time.Second
	bound := min(10*itNodeTimeout, goRedisReadTimeout/2)

	for paused := 1; paused <= 3; paused++ {
		require.NoError(t, cl.g.Server(paused-1).Pause())
		key := itKey(t) + ":" + string(rune('0'+paused))
		t0 := time.Now()
		l, err := c.TryAcquire(ctx, key, itUndoTTL)
		elapsed := time.Since(t0)
		assert.Less(t, elapsed, bound, "%d paused: TryAcquire took %s", paused, elapsed)
		if paused < 3 {
			require.NoError(t, err, "%d paused", paused)
			assert.True(t, l.Held())
			continue
		}
		require.ErrorIs(t, err, redlock.ErrNotAcquired)
		assert.GreaterOrEqual(t, elapsed, itNodeTimeout, "a majority out of reach is only known at NodeTimeout")
		qe := itQuorumError(t, err)
		require.Len(t, qe.Nodes, 5)
		assert.Equal(t, 2, qe.Yes)
		for i := range 3 {
			assert.Equal(t, redlock.VoteError, qe.Nodes[i].Vote, "node %d", i)
			assert.True(t, itIsTimeout(qe.Nodes[i].Err), "node %d: want a NodeTimeout, got %v", i, qe.Nodes[i].Err)
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
	cl := itStart(t, itConfig{n: 1, options: func(i int, addr string) *redis.Options {
		o := itDefaultOptions(i, addr)
		o.ContextTimeoutEnabled = true
		return o
	}})
	c := cl.locker(t, redlock.Config{NodeTimeout: itNodeTimeout})
	key := itKey(t)
	l, err := c.TryAcquire(ctx, key, itUndoTTL)
	require.NoError(t, err)
	assert.Positive(t, l.Token())
	_, err = l.Release(ctx)
	require.NoError(t, err)

	require.NoError(t, cl.g.Server(0).Pause())
	t0 := time.Now()
	_, err = c.TryAcquire(ctx, key, itUndoTTL)
	elapsed := time.Since(t0)
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	assert.True(t, itIsTimeout(itQuorumError(t, err).Nodes[0].Err), "want a NodeTimeout: %v", err)
	assert.GreaterOrEqual(t, elapsed, itNodeTimeout)
	assert.Less(t, elapsed, 10*itNodeTimeout, "the paused node held the caller for %s", elapsed)
	require.NoError(t, cl.g.Server(0).Resume())
	l, err = c.Acquire(ctx, key, itUndoTTL)
	require.NoError(t, err)
	_, err = l.Release(ctx)
	require.NoError(t, err)
}

// TestIntegrationSlowNodeDoesNotSlowAcquire: a node whose replies are held
// does not delay an acquisition that a majority already granted.
func TestIntegrationSlowNodeDoesNotSlowAcquire(t *testing.T) {
	ctx := context.Background()
	cl := itStart(t, itConfig{n: 5, proxied: 1})
	const timeout = time.Second // long, so that returning earlier proves the early return
	c := cl.locker(t, redlock.Config{NodeTimeout: timeout})
	p := cl.proxies[0]

	p.Hold()
	delivered := p.BytesDown()
	t0 := time.Now()
	l, err := c.TryAcquire(ctx, itKey(t), 5*time.Second)
	elapsed := time.Since(t0)
	require.NoError(t, err)
	assert.Less(t, elapsed, timeout, "did not wait for the held node")
	assert.Equal(t, delivered, p.BytesDown(), "no reply of the held node was delivered during the acquisition")
	wctx, cancel := context.WithTimeout(ctx, itWaitFor)
	defer cancel()
	require.NoError(t, p.WaitHeld(wctx), "the held node got the request")
	assert.GreaterOrEqual(t, p.Held(), 1, "its reply is still held")
	assert.True(t, l.Held())

	p.Release()
	n, err := l.Release(ctx)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, n, 3)
	cl.waitAbsent(t, itKey(t)) // the slow node granted too, and is released too
}

// TestIntegrationValidity: latency on a majority shortens the validity by
// at least the latency; latency beyond NodeTimeout on a majority fails the
// acquisition; MinValidity turns a slow acquisition into a failure.
func TestIntegrationValidity(t *testing.T) {
	ctx := context.Background()
	cl := itStart(t, itConfig{n: 5, proxied: 5})
	slow := cl.proxies[:3]
	setLatency := func(d time.Duration) {
		for _, p := range slow {
			p.SetLatency(d)
		}
	}

	// The delays below leave hundreds of milliseconds between what a test
	// tells apart (NodeTimeout and the latency, MinValidity and the validity
	// left), for a busy machine's scheduling under -race.
	t.Run("latency is subtracted", func(t *testing.T) {
		const ttl, d = 2 * time.Second, 100 * time.Millisecond
		c := cl.locker(t, redlock.Config{NodeTimeout: 500 * time.Millisecond})
		setLatency(d)
		defer setLatency(0)

		t0 := time.Now()
		l, err := c.TryAcquire(ctx, itKey(t), ttl)
		elapsed := time.Since(t0)
		require.NoError(t, err)
		remaining := l.Remaining()
		assert.GreaterOrEqual(t, elapsed, d, "a majority needs a delayed node")
		// validUntil = start + TTL - drift: the keys were set after the
		// start, so they outlive it; the validity left when the call
		// returns is therefore at most TTL - elapsed - drift.
		assert.False(t, l.AcquiredAt().Before(t0))
		assert.Less(t, l.AcquiredAt().Sub(t0), d, "AcquiredAt is the start of the attempt")
		assert.Equal(t, l.AcquiredAt().Add(ttl-itDrift(ttl)), l.ValidUntil())
		assert.LessOrEqual(t, remaining, ttl-itDrift(ttl)-d)
		assert.Greater(t, remaining, time.Duration(0))

		// Safety: no node's key expires before the local deadline. The
		// expiry is at most (time after PTTL returned) + PTTL + 1ms.
		held := 0
		for i, dc := range cl.direct {
			v, _ := dc.Get(ctx, l.Key()).Result()
			if v != l.Value() {
				continue
			}
			held++
			pttl, err := dc.PTTL(ctx, l.Key()).Result()
			require.NoError(t, err)
			latest := time.Now().Add(pttl + time.Millisecond)
			assert.False(t, latest.Before(l.ValidUntil()), "node %d: key expires %s before the lock's deadline",
				i, l.ValidUntil().Sub(latest))
		}
		assert.GreaterOrEqual(t, held, 3)
		_, err = l.Release(ctx)
		require.NoError(t, err)
	})

	t.Run("latency above NodeTimeout on a majority", func(t *testing.T) {
		c := cl.locker(t, redlock.Config{NodeTimeout: itNodeTimeout})
		const d = 3 * itNodeTimeout
		setLatency(d)
		defer setLatency(0)
		key, cp := itKey(t), itNewCapture()

		t0 := time.Now()
		_, err := c.TryAcquire(ctx, key, itUndoTTL, cp.option())
		elapsed := time.Since(t0)
		require.ErrorIs(t, err, redlock.ErrNotAcquired)
		assert.Less(t, elapsed, d, "gave up at NodeTimeout, before the delayed replies")
		qe := itQuorumError(t, err)
		assert.Equal(t, 2, qe.Yes)
		for i := range 3 {
			assert.True(t, itIsTimeout(qe.Nodes[i].Err), "node %d: %v", i, qe.Nodes[i].Err)
		}
		// The delayed nodes did set the key: the undo must remove it.
		cl.waitGone(t, key, cp.last(t))
	})

	t.Run("MinValidity", func(t *testing.T) {
		const ttl, minValidity = 4 * time.Second, 3600 * time.Millisecond
		c := cl.locker(t, redlock.Config{NodeTimeout: 800 * time.Millisecond, MinValidity: minValidity})
		key, cp := itKey(t), itNewCapture()

		// Control: without latency the validity left is above MinValidity.
		l, err := c.TryAcquire(ctx, key, ttl)
		require.NoError(t, err, "control: a fast acquisition passes MinValidity")
		_, err = l.Release(ctx)
		require.NoError(t, err)

		// TTL - drift - latency = 4000 - 42 - 400 = 3558ms < 3600ms.
		setLatency(400 * time.Millisecond)
		defer setLatency(0)
		t0 := time.Now()
		_, err = c.TryAcquire(ctx, key, ttl, cp.option())
		require.ErrorIs(t, err, redlock.ErrNotAcquired)
		qe := itQuorumError(t, err)
		assert.Contains(t, qe.Reason, "MinValidity")
		assert.GreaterOrEqual(t, qe.Yes, 3, "a majority did grant it")
		assert.NotEmpty(t, cp.last(t))
		// Released on every node, well before the keys would expire.
		cl.waitAbsentWithin(t, time.Until(t0.Add(ttl-itDrift(ttl)))/2, key)
	})
}

// TestIntegrationExtendTimeout: an Extend whose majority answers later than
// NodeTimeout fails; with a wait above the delay (internal/redlockx.Extend,
// as the lease package's refreshes wait) it succeeds,
// and its new validity still counts from its start, so no node's key
// expires before the local deadline.
func TestIntegrationExtendTimeout(t *testing.T) {
	ctx := context.Background()
	cl := itStart(t, itConfig{n: 5, proxied: 5})
	c := cl.locker(t, redlock.Config{NodeTimeout: itNodeTimeout})
	const ttl = 5 * time.Second
	l, err := c.TryAcquire(ctx, itKey(t), ttl)
	require.NoError(t, err)
	for _, p := range cl.proxies[:3] {
		p.SetLatency(itNodeTimeout + 100*time.Millisecond)
	}

	// First the long wait (before a timed-out request makes go-redis dial
	// again, through the slow proxies), then NodeTimeout.
	t0 := time.Now()
	require.NoError(t, redlockx.Extend(ctx, l, 0, 4*itNodeTimeout))
	elapsed := time.Since(t0)
	assert.GreaterOrEqual(t, elapsed, itNodeTimeout, "the extend waited for the slow majority")
	until := l.ValidUntil()
	assert.False(t, until.Before(t0.Add(ttl-itDrift(ttl))), "validity counts from the extend's start")
	assert.False(t, until.After(time.Now().Add(ttl-itDrift(ttl))))
	// Every key that voted yes outlives the local deadline.
	for i, d := range cl.direct[:3] {
		pttl, err := d.PTTL(ctx, itKey(t)).Result()
		require.NoError(t, err)
		assert.Greater(t, time.Now().Add(pttl), until, "server %d's key expires before the local deadline", i)
	}

	err = l.Extend(ctx, 0)
	require.ErrorIs(t, err, redlock.ErrNotExtended, "a majority later than NodeTimeout")
	assert.ErrorContains(t, err, "NodeTimeout")
	require.Equal(t, until, l.ValidUntil())

	// A wait shorter than the delay fails, naming the wait.
	err = redlockx.Extend(ctx, l, 0, itNodeTimeout+10*time.Millisecond)
	require.ErrorIs(t, err, redlock.ErrNotExtended)
	assert.ErrorContains(t, err, "no answer within 210ms")
	require.Equal(t, until, l.ValidUntil())
}
