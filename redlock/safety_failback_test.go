package redlock_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/faultproxy"
	"github.com/redlease/redlease/internal/testing/locktest"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/internal/testing/unsafetest"
	"github.com/redlease/redlease/internal/unsafeopt"
	"github.com/redlease/redlease/redlock"
)

// failback: servers A (0), B (1), C (2), D (3). B replicates A through a
// TCP proxy. Node 0 of both redlock clients is A, at A's own address
// throughout; nodes 1 and 2 are C and D. Client 1 takes the lock on A and C
// (D is held by another client) while the replication link is cut, so B
// never gets it. Then B is promoted, A becomes B's replica (a full resync
// replaces A's dataset with B's: no lock, but A's own marker, written by A's
// process, which never restarts), and A is promoted back: a failback. D's
// holder lets go, so A's vote decides whether client 2 can win the lock that
// client 1 still holds.
type failback struct {
	rig        *servers
	c2         *redlock.Client
	l1         *redlock.Lock
	key        string
	node0      string
	failedBack time.Time
}

var failbackCfg = redlock.Config{NodeTimeout: 200 * time.Millisecond, MaxTTL: 3 * time.Second, RetryDelay: 20 * time.Millisecond}

// waitRole waits until c's INFO replication contains every one of want.
func waitRole(t *testing.T, c *redis.Client, what string, want ...string) {
	t.Helper()
	require.Eventually(t, func() bool { return redistest.InfoContains(context.Background(), c, "replication", want...) },
		10*time.Second, attemptTick, what)
}

func replicaOf(t *testing.T, c *redis.Client, master string) {
	t.Helper()
	host, port, err := net.SplitHostPort(master)
	require.NoError(t, err)
	require.NoError(t, c.Do(context.Background(), "REPLICAOF", host, port).Err())
	waitRole(t, c, "no synchronised replica of "+master, "master_link_status:up", "master_sync_in_progress:0")
}

// syncedMarker: B holds A's marker: a faithful copy up to here. It
// returns A's run_id.
func syncedMarker(t *testing.T, a, b *redis.Client, key string) string {
	ctx := context.Background()
	// WAIT waits for this connection's own last write, and New wrote the
	// marker on another one: a write here first puts the marker before
	// what WAIT waits for.
	require.NoError(t, a.Set(ctx, key+":sync", 1, time.Minute).Err())
	n, err := a.Wait(ctx, 1, 5000).Result()
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "B did not acknowledge A's writes")
	runA := runID(t, a)
	r, err := b.HGet(ctx, markerKey, "r").Result()
	require.NoError(t, err)
	require.Equal(t, runA, r, "B holds A's marker, with A's run_id")
	return runA
}

// startFailback sets the failback up for clients with cfg.
func startFailback(t *testing.T, cfg redlock.Config) *failback {
	ctx := context.Background()
	rig := startKillable(t, 4, redistest.Options{})
	a, b := rig.Direct[0], rig.Direct[1]
	link, err := faultproxy.New(rig.addr(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = link.Close() })
	replicaOf(t, b, link.Addr())

	f := &failback{rig: rig, key: testKey(t), node0: rig.addr(0)}
	nodes := func() []redis.UniversalClient {
		var out []redis.UniversalClient
		for _, i := range []int{0, 2, 3} {
			out = append(out, redistest.NewClient(t, killableOptions(rig.addr(i))))
		}
		return out
	}
	c1 := locktest.New(t, cfg, nodes(), true)
	f.c2 = locktest.New(t, cfg, nodes(), false)
	runA := syncedMarker(t, a, b, f.key)

	// The replication link breaks; A takes the lock, B never sees it.
	link.Partition()
	rig.setForeign(t, f.key, 3)
	f.l1, err = c1.TryAcquire(ctx, f.key, cfg.MaxTTL)
	require.NoError(t, err)
	require.Equal(t, f.l1.Value(), a.Get(ctx, f.key).Val())
	require.ErrorIs(t, b.Get(ctx, f.key).Err(), redis.Nil, "B lags: it does not have the lock")

	// Failover to B, then back to A with B's dataset. A's process, and so
	// its run_id, survive throughout.
	require.NoError(t, b.Do(ctx, "REPLICAOF", "NO", "ONE").Err())
	waitRole(t, b, "B was not promoted", "role:master")
	replicaOf(t, a, rig.addr(1))
	require.NoError(t, a.Do(ctx, "REPLICAOF", "NO", "ONE").Err())
	waitRole(t, a, "A was not promoted back", "role:master")
	require.NoError(t, b.Do(ctx, "REPLICAOF", "NO", "ONE").Err()) // B steps aside
	f.failedBack = time.Now()
	require.Equal(t, runA, runID(t, a), "A's process restarted: the test would not test the failback")
	require.ErrorIs(t, a.Get(ctx, f.key).Err(), redis.Nil, "A's dataset was not replaced")
	r, err := a.HGet(ctx, markerKey, "r").Result()
	require.NoError(t, err)
	require.Equal(t, runA, r, "A holds its own old marker again")
	rig.freeAfter(t, f.l1, f.key, 3)
	require.True(t, f.l1.Held(), "the set-up took longer than the lock's validity: the test proves nothing")
	return f
}

// TestSafetyFailbackAfterFullResync: a master that failed over and failed
// back with its process running has its run_id and its own old marker, but a
// dataset that lost client 1's lock. Its replication ID changed, and so did
// its copy of the Function library (the full resync loaded B's), so it is
// quarantined (docs/design.md S6): client 2 cannot win the lock client 1 holds, A votes no
// for MaxTTL from the first contact after the failback, and tokens continue
// above client 1's (S5). In EVALSHA mode the replication ID alone catches it.
func TestSafetyFailbackAfterFullResync(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  redlock.Config
	}{
		{"FCALL", failbackCfg},
		{"EVALSHA", evalsha(failbackCfg)},
		{"FCALL, the token alone", unsafeCfg(t, failbackCfg, unsafeopt.Off{ReplicationIDCheck: true})},
	} {
		t.Run(tc.name, func(t *testing.T) { failbackQuarantined(t, tc.cfg) })
	}
}

func evalsha(cfg redlock.Config) redlock.Config {
	cfg.DisableFunctions = true
	return cfg
}

func unsafeCfg(t *testing.T, cfg redlock.Config, off unsafeopt.Off) redlock.Config {
	unsafetest.TurnOff(t, &cfg, off)
	return cfg
}

// failbackQuarantined is TestSafetyFailbackAfterFullResync with cfg.
func failbackQuarantined(t *testing.T, cfg redlock.Config) {
	f := startFailback(t, cfg)
	maxTTL := failbackCfg.MaxTTL

	quarantinedWhileHeld(t, f.c2, f.key, f.l1, f.node0, func() {})
	// Client 1 lets go and C is taken by another client: every majority
	// needs A, which votes once MaxTTL has passed since the failback.
	votesAfterQuarantine(t, f.rig, f.c2, f.key, f.l1, f.node0, f.failedBack, maxTTL)
}

// TestSafetyFailbackWithoutReplicationIDCheck is the negative control of
// TestSafetyFailbackAfterFullResync: with the quarantine comparing run_ids
// only (in EVALSHA mode; in FCALL mode, without the incarnation token
// either), A votes at once, the lock is granted twice and the token repeats.
func TestSafetyFailbackWithoutReplicationIDCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  redlock.Config
	}{
		{"EVALSHA", unsafeCfg(t, evalsha(failbackCfg), unsafeopt.Off{ReplicationIDCheck: true})},
		{"FCALL", unsafeCfg(t, failbackCfg, unsafeopt.Off{ReplicationIDCheck: true, IncarnationToken: true})},
	} {
		t.Run(tc.name, func(t *testing.T) { failbackTwice(t, tc.cfg) })
	}
}

// failbackTwice is TestSafetyFailbackWithoutReplicationIDCheck with cfg.
func failbackTwice(t *testing.T, cfg redlock.Config) {
	f := startFailback(t, cfg)
	l, err := f.c2.TryAcquire(context.Background(), f.key, time.Second)
	require.NoError(t, err, "without the replication-ID check, A votes at once")
	require.True(t, f.l1.Held() && l.Held(), "double grant expected: both clients hold the lock")
	assert.LessOrEqual(t, l.Token(), f.l1.Token(), "and the token does not exceed client 1's")
}
