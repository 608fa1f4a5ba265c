package redlock_test

// Nothing left behind (docs/design.md §4.6): fencing counters expire, a missing
// counter starts again from the node's high-water mark, and server memory
// returns to where it was once the counters' TTL has passed. On real
// servers, with a short counter TTL where a test must see counters expire.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
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

// counterCfg gives counters a TTL short enough to wait for in a test.
func counterCfg(t *testing.T, counterTTL time.Duration, off unsafeopt.Off) redlock.Config {
	cfg := cyclesCfg
	off.CounterTTL = counterTTL
	unsafetest.TurnOff(t, &cfg, off)
	return cfg
}

// cyclesCfg is for many cycles at once under -race on a loaded machine.
var cyclesCfg = redlock.Config{NodeTimeout: 400 * time.Millisecond, MaxTTL: 2 * time.Second, RetryDelay: 20 * time.Millisecond}

// cyclesTTL is the TTL of cycleKeys' locks.
const cyclesTTL = 1500 * time.Millisecond

// cycleKeys acquires and releases n distinct keys (prefix + i) with 16
// goroutines, each key once.
func cycleKeys(t testing.TB, c *redlock.Client, prefix string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				l, err := c.Acquire(ctx, prefix+strconv.Itoa(i), cyclesTTL)
				cancel()
				if err == nil {
					// A copy on a node that missed the release expires
					// with the lock's TTL: the keys' TTLs are what the
					// callers check.
					if err = l.Release(context.Background()); errors.Is(err, redlock.ErrNotReleased) {
						err = nil
					}
				}
				if err != nil {
					errs <- fmt.Errorf("key %d: %w", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// expireCounters waits until no server holds key's counter any more.
func expireCounters(t *testing.T, rig *servers, key string) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, d := range rig.Direct {
			if d.Exists(context.Background(), key+":fence").Val() != 0 {
				return false
			}
		}
		return true
	}, 10*time.Second, attemptTick, "counters of %q never expired", key)
}

// TestTokensIncreaseAcrossCounterExpiry: tokens of one key strictly
// increase across expiries of its counters (a missing counter starts again
// from the node's high-water mark) and across an empty restart of a node
// (quarantine, floor raise), with other keys raising the high-water mark
// in between.
func TestTokensIncreaseAcrossCounterExpiry(t *testing.T) {
	t.Parallel()
	rig := startKillable(t, 3, redistest.Options{})
	cfg := counterCfg(t, 300*time.Millisecond, unsafeopt.Off{})
	c := locktest.New(t, cfg, rig.NewNodes(t), true)
	key := testKey(t)
	last := issueTokens(t, c, key, fenceTTL, 3, 0)
	for round := range 3 {
		cycleKeys(t, c, fmt.Sprintf("other-%d:", round), 20)
		expireCounters(t, rig, key)
		last = issueTokens(t, c, key, fenceTTL, 2, last)
	}
	s := rig.Server(0)
	require.NoError(t, s.Kill())
	require.NoError(t, s.Restart(true))
	expireCounters(t, rig, key)
	// Node 0 is quarantined for MaxTTL (from the first acquisition that
	// reaches it); nodes 1 and 2 decide meanwhile, and raise its floor.
	ctx := context.Background()
	// An attempt that fails (once under -p 3 and an extra busy core, the
	// host stalled for all of its second) is made again.
	require.Eventually(t, func() bool {
		token, err := nextToken(c, key, fenceTTL)
		if err != nil {
			t.Logf("while node 0 is quarantined: %v", err)
			return false
		}
		assert.Greater(t, token, last, "fencing token went backwards")
		last = token
		in, err := c.Inspect(ctx, key)
		return errors.Is(err, redlock.ErrNoHolder) && !in.Nodes[0].Quarantined
	}, 10*time.Second, attemptTick, "node 0 never ready again")
	// Node 1 held by another client: every majority now needs node 0.
	rig.setForeign(t, key, 1)
	expireCounters(t, rig, key)
	issueTokens(t, c, key, fenceTTL, 3, last)
}

// TestTokensRepeatWithCounterFromZero is the negative control of
// TestTokensIncreaseAcrossCounterExpiry: a missing counter started from 0
// gives a token that does not exceed the last one.
func TestTokensRepeatWithCounterFromZero(t *testing.T) {
	t.Parallel()
	rig := startKillable(t, 3, redistest.Options{})
	cfg := counterCfg(t, 300*time.Millisecond, unsafeopt.Off{CounterFromZero: true})
	c := locktest.New(t, cfg, rig.NewNodes(t), true)
	key := testKey(t)
	last := issueTokens(t, c, key, fenceTTL, 3, 0)
	expireCounters(t, rig, key)
	l, err := c.Acquire(context.Background(), key, fenceTTL)
	require.NoError(t, err)
	assert.LessOrEqual(t, l.Token(), last, "a counter from 0 repeats a token")
}

// TestServerMemoryReturns: after many acquire/release cycles of distinct
// keys, every key the library left on the servers has a TTL, except the one
// marker per server; and once the counters' TTL (1s here) has passed, every
// such key is gone and server memory is back within 1 MiB of where it
// started. REDLEASE_MEMORY_CYCLES sets the number of cycles (default
// 10,000; docs/safety.md's figure is from 100,000).
func TestServerMemoryReturns(t *testing.T) {
	t.Parallel()
	cycles := 10_000
	if v := os.Getenv("REDLEASE_MEMORY_CYCLES"); v != "" {
		var err error
		cycles, err = strconv.Atoi(v)
		require.NoError(t, err, "REDLEASE_MEMORY_CYCLES")
	}
	rig := startKillable(t, 3, redistest.Options{})
	c := locktest.New(t, counterCfg(t, time.Second, unsafeopt.Off{}), rig.NewNodes(t), true)
	ctx := context.Background()
	cycleKeys(t, c, "warm-up:", 100) // connections, scripts, the marker
	used := func(i int) int64 {
		info, err := rig.Direct[i].Info(ctx, "memory").Result()
		require.NoError(t, err)
		return statField(t, info, "used_memory")
	}
	var before []int64
	for i := range rig.Direct {
		require.Eventually(t, func() bool { return rig.Direct[i].DBSize(ctx).Val() == 1 }, 10*time.Second, attemptTick)
		before = append(before, used(i))
	}
	cycleKeys(t, c, "memory:", cycles)
	peak := used(0)
	for i, d := range rig.Direct {
		t.Logf("node %d: %d keys, all with a TTL but the marker", i, keysWithTTL(t, d))
	}
	for i, d := range rig.Direct {
		require.Eventually(t, func() bool { return d.DBSize(ctx).Val() == 1 }, 30*time.Second, attemptTick,
			"node %d: the counters never expired", i)
		after := used(i)
		t.Logf("node %d: used_memory %d before, %d after %d cycles (peak on node 0: %d)", i, before[i], after, cycles, peak)
		assert.InDelta(t, before[i], after, 1<<20, "node %d: memory did not return within 1 MiB", i)
	}
}

// keysWithTTL counts d's keys, failing the test at one without a TTL
// other than the marker.
func keysWithTTL(t *testing.T, d *redis.Client) int {
	t.Helper()
	ctx := context.Background()
	var cursor uint64
	keys := 0
	for {
		batch, next, err := d.Scan(ctx, cursor, "*", 1000).Result()
		require.NoError(t, err)
		for _, k := range batch {
			keys++
			if k == markerKey {
				continue
			}
			ttl, err := d.PTTL(ctx, k).Result()
			require.NoError(t, err)
			require.NotEqual(t, time.Duration(-1), ttl, "key %q has no TTL", k)
		}
		if cursor = next; cursor == 0 {
			return keys
		}
	}
}

// statField reads an integer field of an INFO reply.
func statField(t *testing.T, info, name string) int64 {
	t.Helper()
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no %s in INFO", name)
	return 0
}

// TestTokensIncreaseAcrossFailoverAndCounterExpiry: the lagging-replica
// failover (node 0 replaced by a replica that lacks client 1's lock) with
// counters that expire: once B votes again and every counter of the key
// has expired, tokens still continue above client 1's, restarting from the
// nodes' high-water marks (B's raised with its floor).
func TestTokensIncreaseAcrossFailoverAndCounterExpiry(t *testing.T) {
	cfg := counterCfg(t, 300*time.Millisecond, unsafeopt.Off{})
	cfg.MaxTTL, cfg.NodeTimeout = failoverCfg.MaxTTL, failoverCfg.NodeTimeout
	f := startFailoverCfg(t, cfg)
	ctx := context.Background()
	last := f.l1.Token()
	err := f.l1.Release(ctx)
	require.NoError(t, err)
	// Until B's quarantine is over, C and D decide; then C is held by
	// another client, so every majority needs B.
	last = issueTokens(t, f.c2, f.key, time.Second, 2, last)
	f.rig.setForeign(t, f.key, 2)
	require.Eventually(t, func() bool {
		l, err := f.c2.TryAcquire(ctx, f.key, time.Second)
		if err != nil {
			return false
		}
		require.Greater(t, l.Token(), last, "fencing token went backwards after the failover")
		last = l.Token()
		err = l.Release(ctx)
		require.NoError(t, err)
		return true
	}, cfg.MaxTTL+5*time.Second, attemptTick, "B never voted again")
	for range 2 {
		for _, i := range []int{1, 3} { // B and D: the key's counters
			require.Eventually(t, func() bool {
				return f.rig.Direct[i].Exists(ctx, f.key+":fence").Val() == 0
			}, 10*time.Second, attemptTick, "server %d's counter never expired", i)
		}
		last = issueTokens(t, f.c2, f.key, time.Second, 2, last)
	}
}
