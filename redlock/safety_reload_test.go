package redlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/scripts"
	"github.com/redlease/redlease/internal/testing/locktest"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/internal/unsafeopt"
	"github.com/redlease/redlease/redlock"
)

// reload: one server, which replaces its dataset with an RDB saved before
// client 1 took its lock (DEBUG RELOAD NOSAVE) while its process, its
// run_id and its replication ID stay: the lock is forgotten, and neither
// the run_id nor the replication ID shows it (docs/design.md §4.7.3).
type reload struct {
	c2  *redlock.Client
	l1  *redlock.Lock
	key string
}

// startReload sets the reload up for clients with cfg; fcall says which
// mode the node must be in.
func startReload(t *testing.T, cfg redlock.Config, fcall bool) *reload {
	ctx := context.Background()
	srv := redistest.Start(t, 1, redistest.Options{Extra: []string{"enable-debug-command local"}}).Server(0)
	direct := srv.Client(t)
	nodes := func() []redis.UniversalClient {
		return []redis.UniversalClient{redistest.NewClient(t, killableOptions(srv.Addr()))}
	}
	c1 := locktest.New(t, cfg, nodes(), true)
	r := &reload{c2: locktest.New(t, cfg, nodes(), false), key: testKey(t)}
	for _, c := range []*redlock.Client{c1, r.c2} {
		require.Equal(t, fcall, c.Internal().Heard()[0].Function, "the node's mode")
	}
	if fcall {
		require.NoError(t, direct.HGet(ctx, markerKey, "t:"+scripts.Version).Err(), "the start-up probe recorded the copy's token")
	}
	require.NoError(t, direct.Save(ctx).Err(), "the older RDB")
	runA, replA := runID(t, direct), replID(t, direct)

	var err error
	r.l1, err = c1.TryAcquire(ctx, r.key, cfg.MaxTTL)
	require.NoError(t, err)
	require.NoError(t, direct.Do(ctx, "DEBUG", "RELOAD", "NOSAVE").Err())
	require.ErrorIs(t, direct.Get(ctx, r.key).Err(), redis.Nil, "the reload did not forget the lock")
	require.Equal(t, runA, runID(t, direct), "the process restarted: the test would not test a reload")
	require.Equal(t, replA, replID(t, direct), "the replication ID changed: the test would not test a reload")
	require.True(t, r.l1.Held(), "the set-up took longer than the lock's validity: the test proves nothing")
	return r
}

func replID(t *testing.T, c *redis.Client) string {
	t.Helper()
	info, err := c.Info(context.Background(), "replication").Result()
	require.NoError(t, err)
	return redistest.InfoField(info, "master_replid")
}

var reloadCfg = redlock.Config{NodeTimeout: 200 * time.Millisecond, MaxTTL: 5 * time.Second}

// TestSafetyDebugReloadOldRDB: in FCALL mode the reload loaded the Function
// library anew, so the marker's token for this version is not the new
// copy's: the node is quarantined and client 2 cannot win the lock client 1
// holds (docs/design.md S6, §4.7.5). Inspect, the new copy's first call
// (it carries no nonce, so the copy has no token yet), already reports the
// node quarantined: a copy records only its own token, so a token recorded
// for this version that is not this copy's was another copy's.
func TestSafetyDebugReloadOldRDB(t *testing.T) {
	r := startReload(t, reloadCfg, true)
	in, err := r.c2.Inspect(context.Background(), r.key)
	require.ErrorIs(t, err, redlock.ErrNoHolder)
	require.Len(t, in.Nodes, 1)
	assert.True(t, in.Nodes[0].Quarantined, "Inspect before any acquire: the reloaded node reported quarantined")
	_, err = r.c2.TryAcquire(context.Background(), r.key, time.Second)
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	qe := quorumError(t, err)
	require.Len(t, qe.Nodes, 1)
	assert.True(t, qe.Nodes[0].Quarantined, "the reloaded node is quarantined: %v", err)
	assert.True(t, r.l1.Held())
}

// TestSafetyDebugReloadUncaught is the negative control of
// TestSafetyDebugReloadOldRDB: in EVALSHA mode (run_id and replication ID
// only), or in FCALL mode with the token not compared, the node votes at
// once and the lock is granted twice.
func TestSafetyDebugReloadUncaught(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   redlock.Config
		fcall bool
	}{
		{"EVALSHA", evalsha(reloadCfg), false},
		{"FCALL without the token", unsafeCfg(t, reloadCfg, unsafeopt.Off{IncarnationToken: true}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startReload(t, tc.cfg, tc.fcall)
			l, err := r.c2.TryAcquire(context.Background(), r.key, time.Second)
			require.NoError(t, err, "the reloaded node votes at once")
			assert.True(t, r.l1.Held() && l.Held(), "double grant expected: both clients hold the lock")
		})
	}
}

// TestFunctionFlushQuarantines: an operator's FUNCTION FLUSH on a node in
// FCALL mode makes the next call load the library anew, a copy with
// another token: the node is quarantined like a restarted one (a false
// alarm that SECURITY.md and docs/design.md §4.7.5 document), and stays in
// FCALL mode.
func TestFunctionFlushQuarantines(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, 1).Server(0)
	c := locktest.New(t, reloadCfg, []redis.UniversalClient{redistest.NewClient(t, killableOptions(srv.Addr()))}, true)
	l, err := c.TryAcquire(ctx, testKey(t)+":a", time.Second)
	require.NoError(t, err)
	require.NoError(t, srv.Client(t).FunctionFlush(ctx).Err())
	_, err = c.TryAcquire(ctx, testKey(t)+":b", time.Second)
	qe := quorumError(t, err)
	require.Len(t, qe.Nodes, 1)
	assert.True(t, qe.Nodes[0].Quarantined, "a new copy of the library: quarantined: %v", err)
	assert.True(t, c.Internal().Heard()[0].Function, "still in FCALL mode")
	assert.True(t, l.Held())
}
