package redlock_test

// Integration tests of bad configurations, bad arguments, node error
// replies (WRONGTYPE, READONLY, NOSCRIPT) and Inspect.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/faultproxy"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/redlock"
)

// newErr calls redlock.New, closes the Client if one is made, and returns
// the error (or fails the test if New panics).
func newErr(t *testing.T, cfg redlock.Config, nodes ...redis.UniversalClient) error {
	t.Helper()
	var err error
	require.NotPanics(t, func() {
		var c *redlock.Client
		if c, err = redlock.New(context.Background(), cfg, nodes...); err == nil {
			_ = c.Close()
		}
	})
	return err
}

// TestIntegrationNewRefuses: New refuses node lists and servers that would
// break "one server, one vote" (docs/design.md S7) or could evict a lock key.
func TestIntegrationNewRefuses(t *testing.T) {
	cl := startServers(t, serversConfig{n: 3})
	cfg := redlock.Config{NodeTimeout: nodeTimeout, Logger: testLogger(t)}

	t.Run("no nodes", func(t *testing.T) {
		err := newErr(t, cfg)
		require.ErrorIs(t, err, redlock.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "no nodes")
	})
	t.Run("nil node", func(t *testing.T) {
		err := newErr(t, cfg, cl.Nodes[0], nil, cl.Nodes[2])
		require.ErrorIs(t, err, redlock.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "node 1 is nil")
	})
	t.Run("typed nil node", func(t *testing.T) {
		var nc *redis.Client // a nil *redis.Client is a non-nil UniversalClient
		err := newErr(t, cfg, cl.Nodes[0], nc, cl.Nodes[2])
		require.ErrorIs(t, err, redlock.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "node 1")
	})
	t.Run("invalid config", func(t *testing.T) {
		err := newErr(t, redlock.Config{NodeTimeout: time.Second, MaxTTL: 2 * time.Second}, cl.Nodes...)
		require.ErrorIs(t, err, redlock.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "MaxTTL (2s)")
	})
	newRefusesTwins(t, cl, cfg)
	newRefusesEviction(t, cl, cfg)
}

// newRefusesTwins: New refuses server 1 as two nodes.
func newRefusesTwins(t *testing.T, cl *servers, cfg redlock.Config) {
	addr := cl.Server(1).Addr()
	t.Run("same address twice", func(t *testing.T) {
		twin := redistest.NewClient(t, fastOptions(1, addr))
		err := newErr(t, cfg, cl.Nodes[0], cl.Nodes[1], twin)
		require.ErrorIs(t, err, redlock.ErrInvalidArgument)
		assert.Contains(t, err.Error(), addr)
		assert.Contains(t, err.Error(), "one vote")
	})
	t.Run("same server under two addresses", func(t *testing.T) {
		p, err := faultproxy.New(addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = p.Close() })
		twin := redistest.NewClient(t, fastOptions(1, p.Addr()))
		err = newErr(t, cfg, cl.Nodes[0], cl.Nodes[1], twin)
		require.ErrorIs(t, err, redlock.ErrInvalidArgument)
		assert.Contains(t, err.Error(), addr)
		assert.Contains(t, err.Error(), p.Addr())
		assert.Contains(t, err.Error(), "run_id")
	})
}

// newRefusesEviction: New refuses server 1 with an evicting policy.
func newRefusesEviction(t *testing.T, cl *servers, cfg redlock.Config) {
	ctx := context.Background()
	addr := cl.Server(1).Addr()
	t.Run("evicting maxmemory-policy", func(t *testing.T) {
		s := cl.Direct[1]
		require.NoError(t, s.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err())
		t.Cleanup(func() { _ = s.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err() })
		err := newErr(t, cfg, cl.Nodes...)
		require.ErrorIs(t, err, redlock.ErrInvalidArgument)
		assert.Contains(t, err.Error(), addr)
		assert.Contains(t, err.Error(), "allkeys-lru")

		allow := cfg
		allow.AllowEviction = true
		require.NoError(t, newErr(t, allow, cl.Nodes...), "AllowEviction accepts it")
	})
	t.Run("evicting and out of memory", func(t *testing.T) {
		// The probe script fails with OOM: the policy must still be read.
		s := cl.Direct[1]
		require.NoError(t, s.ConfigSet(ctx, "maxmemory-policy", "volatile-ttl").Err())
		require.NoError(t, s.ConfigSet(ctx, "maxmemory", "1").Err())
		t.Cleanup(func() {
			_ = s.ConfigSet(ctx, "maxmemory", "0").Err()
			_ = s.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err()
		})
		require.ErrorContains(t, s.Set(ctx, "oom", "x", 0).Err(), "OOM", "the server must be out of memory")
		err := newErr(t, cfg, cl.Nodes...)
		require.ErrorIs(t, err, redlock.ErrInvalidArgument)
		assert.Contains(t, err.Error(), addr)
		assert.Contains(t, err.Error(), "volatile-ttl")
	})
}

// TestIntegrationBadArguments: bad keys and TTLs fail at once with an error
// naming the bad value, and Acquire does not retry them.
func TestIntegrationBadArguments(t *testing.T) {
	ctx := context.Background()
	cl := startServers(t, serversConfig{n: 5})
	c := cl.locker(t, redlock.Config{NodeTimeout: 100 * time.Millisecond})
	key := testKey(t)

	cases := []struct {
		name string
		key  string
		ttl  time.Duration
		msg  []string
	}{
		{"empty key", "", time.Second, []string{"key must not be empty"}},
		{"zero TTL", key, 0, []string{"TTL (0s)", "positive"}},
		{"negative TTL", key, -time.Second, []string{"TTL (-1s)", "positive"}},
		{"TTL not above two NodeTimeouts and drift", key, 200 * time.Millisecond, []string{"TTL (200ms)", "NodeTimeout*2 + drift (204ms)"}},
		{"TTL above MaxTTL", key, 31 * time.Second, []string{"TTL (31s)", "MaxTTL (30s)"}},
		{"TTL not whole milliseconds", key, time.Second + time.Microsecond, []string{"TTL (1.000001s)", "milliseconds"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			check := func(op string, err error) {
				t.Helper()
				require.ErrorIs(t, err, redlock.ErrInvalidArgument, op)
				for _, m := range tc.msg {
					assert.Contains(t, err.Error(), m, op)
				}
			}
			_, err := c.TryAcquire(ctx, tc.key, tc.ttl)
			check("TryAcquire", err)

			actx, cancel := context.WithTimeout(ctx, waitFor)
			defer cancel()
			t0 := time.Now()
			_, err = c.Acquire(actx, tc.key, tc.ttl)
			check("Acquire", err)
			assert.Less(t, time.Since(t0), time.Second, "a bad argument is final: no retries")
			assert.NotErrorIs(t, err, context.DeadlineExceeded)
		})
	}

	t.Run("Extend TTL", func(t *testing.T) {
		l, err := c.TryAcquire(ctx, key, time.Second)
		require.NoError(t, err)
		err = l.Extend(ctx, 31*time.Second)
		require.ErrorIs(t, err, redlock.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "TTL (31s)")
		assert.True(t, l.Held())
		err = l.Release(ctx)
		require.NoError(t, err)
	})
	t.Run("Inspect empty key", func(t *testing.T) {
		_, err := c.Inspect(ctx, "")
		require.ErrorIs(t, err, redlock.ErrInvalidArgument)
	})
}

// TestIntegrationWrongType: a key of another type on every node is a final
// error: Acquire returns it at once instead of retrying until its deadline.
func TestIntegrationWrongType(t *testing.T) {
	ctx := context.Background()
	cl, c, key := startWithLocker(t)
	for _, d := range cl.Direct {
		require.NoError(t, d.RPush(ctx, key, "item").Err())
	}

	actx, cancel := context.WithTimeout(ctx, waitFor)
	defer cancel()
	t0 := time.Now()
	_, err := c.Acquire(actx, key, time.Second)
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	assert.Less(t, time.Since(t0), time.Second, "WRONGTYPE is final")
	assert.NotErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "WRONGTYPE")
	for i, nr := range quorumError(t, err).Nodes {
		assert.Equal(t, "error", redlock.VoteOf(nr), "node %d", i)
	}
	for i, d := range cl.Direct {
		n, err := d.LLen(ctx, key).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "node %d: the list was touched", i)
	}
}

// TestIntegrationReadOnlyNode: a replica answers READONLY. One such node
// out of five does not prevent a lock; when it matters, the error shows it,
// and it is not final (a failover may be under way).
func TestIntegrationReadOnlyNode(t *testing.T) {
	ctx := context.Background()
	cl, c, key := startWithLocker(t)

	master := startServers(t, serversConfig{n: 1}).Server(0)
	replica := cl.Direct[4]
	host, port, _ := strings.Cut(master.Addr(), ":")
	require.NoError(t, replica.ReplicaOf(ctx, host, port).Err())
	require.Eventually(t, func() bool {
		info, err := replica.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	}, waitFor, pollTick)

	l, err := c.TryAcquire(ctx, key, 2*time.Second)
	require.NoError(t, err, "four writable nodes of five are a majority")
	assert.Equal(t, []string{l.Value(), l.Value(), l.Value(), l.Value(), ""}, cl.Values(key))
	err = l.Release(ctx)
	require.NoError(t, err, "the read-only node never held it: nothing to release there")
	// Release returns at a majority: let the other deletes land, or a
	// slow one is a third "no" below that decides before node 4 answers.
	cl.waitAbsent(t, key)

	cl.setForeign(t, key, 0, 1)
	_, err = c.TryAcquire(ctx, key, 2*time.Second)
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	nr := quorumError(t, err).Nodes[4]
	assert.Equal(t, "error", redlock.VoteOf(nr))
	require.Error(t, nr.Err)
	assert.Contains(t, nr.Err.Error(), "READONLY")
	assert.Contains(t, err.Error(), "READONLY")

	// Not final: Acquire keeps trying until its context ends.
	actx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = c.Acquire(actx, key, 2*time.Second)
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// TestIntegrationNoScript: after SCRIPT FLUSH on every node, every call still
// works (go-redis falls back from EVALSHA to EVAL).
func TestIntegrationNoScript(t *testing.T) {
	ctx := context.Background()
	cl, c, key := startWithLocker(t)
	flush := func() {
		for _, d := range cl.Direct {
			require.NoError(t, d.ScriptFlush(ctx).Err())
		}
	}

	flush()
	l, err := c.TryAcquire(ctx, key, 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), l.Token())
	flush()
	require.NoError(t, l.Extend(ctx, 3*time.Second))
	flush()
	in, err := c.Inspect(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, l.Value(), in.Value)
	flush()
	err = l.Release(ctx)
	require.NoError(t, err)
}

// TestIntegrationInspect: a majority read reports the holder, its token and
// its remaining validity; without a majority, ErrNoHolder with every node's
// view.
func TestIntegrationInspect(t *testing.T) {
	ctx := context.Background()
	cl, c, key := startWithLocker(t)
	const ttl = 5 * time.Second

	_, err := c.Inspect(ctx, key)
	require.ErrorIs(t, err, redlock.ErrNoHolder, "free key")

	l1, err := c.TryAcquire(ctx, key, ttl)
	require.NoError(t, err)
	err = l1.Release(ctx)
	require.NoError(t, err)
	cl.waitAbsent(t, key) // Release returns at a majority; the rest follows
	l, err := c.TryAcquire(ctx, key, ttl)
	require.NoError(t, err)
	require.Equal(t, uint64(2), l.Token())
	cl.waitHeld(t, key, l.Value()) // the acquisition returned at a majority too

	checkInspectHeld(t, cl, c, key, l, ttl)
	checkInspectMinority(t, cl, c, key, l)
}

// checkInspectHeld: Inspect reports l, held on every node.
func checkInspectHeld(t *testing.T, cl *servers, c *redlock.Client, key string, l *redlock.Lock, ttl time.Duration) {
	in, err := c.Inspect(context.Background(), key)
	require.NoError(t, err)
	assert.Equal(t, key, in.Key)
	assert.Equal(t, l.Value(), in.Value)
	assert.Equal(t, l.Token(), in.Token)
	assert.Greater(t, in.Remaining, time.Duration(0))
	assert.LessOrEqual(t, in.Remaining, ttl-driftOf(ttl))
	assert.InDelta(t, float64(l.Remaining()), float64(in.Remaining), float64(100*time.Millisecond),
		"the nodes' view of the validity matches the holder's")
	require.Len(t, in.Nodes, 5)
	fenced := 0 // the token is written back on the yes-majority, not on every node
	for i, st := range in.Nodes {
		assert.Equal(t, cl.Server(i).Addr(), st.Node)
		assert.Equal(t, l.Value(), st.Value, "node %d", i)
		assert.Greater(t, st.TTL, time.Duration(0), "node %d", i)
		assert.LessOrEqual(t, st.Counter, l.Token(), "node %d", i)
		if st.Counter == l.Token() {
			fenced++
		}
		assert.False(t, st.Quarantined, "node %d", i)
		assert.Zero(t, st.Quarantine, "node %d", i)
		assert.NoError(t, st.Err, "node %d", i)
	}
	assert.GreaterOrEqual(t, fenced, 3)
}

// checkInspectMinority: the holder's key on only 2 of 5 nodes: no holder.
func checkInspectMinority(t *testing.T, cl *servers, c *redlock.Client, key string, l *redlock.Lock) {
	ctx := context.Background()
	for i := range 3 {
		require.NoError(t, cl.Direct[i].Del(ctx, key).Err())
	}
	in, err := c.Inspect(ctx, key)
	require.ErrorIs(t, err, redlock.ErrNoHolder)
	require.NotNil(t, in)
	assert.Empty(t, in.Value)
	assert.Zero(t, in.Remaining)
	require.Len(t, in.Nodes, 5)
	for i, st := range in.Nodes {
		if i < 3 {
			assert.Empty(t, st.Value, "node %d", i)
			assert.Zero(t, st.TTL, "node %d", i)
		} else {
			assert.Equal(t, l.Value(), st.Value, "node %d", i)
			assert.Greater(t, st.TTL, time.Duration(0), "node %d", i)
		}
		assert.NoError(t, st.Err, "node %d", i)
	}
}
