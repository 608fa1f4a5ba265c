package redlock_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/clusterkey"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedWarning is the warning of a placement where two copies share a
// master.
const sharedWarning = "two copies of every lock share a master"

// A lock slot migrates so that copies 0 and 2 share a master. The next
// acquisition follows go-redis' MOVED to the new master, so copy 2's reply
// comes from another server than before (its run_id): redlock checks the
// placement again and logs the warning, once, naming the copies by slot and
// master, well before its periodic check (10s) could have. Errors name
// each copy by its slot and its current master.
func TestClusterPlacementAfterMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, rl, logs := startLoggedCluster(t, 3)
	slot0, slot2 := clusterkey.Slot(clusterkey.Tag(0, 3)), clusterkey.Slot(clusterkey.Tag(2, 3))
	m0, m2 := c.MasterOf(slot0), c.MasterOf(slot2)
	require.NotNil(t, m0)
	require.NotNil(t, m2)
	_, shared := rl.Placement(ctx)
	require.False(t, shared)
	l := mustTryAcquire(t, rl, "job")
	require.NotContains(t, logs.String(), sharedWarning)

	require.NoError(t, c.MigrateSlot(slot2, m0))
	moved := time.Now()
	// The first acquisition after the move: go-redis follows the MOVED.
	// Copy 2's marker moved with the slot and names m2: it is quarantined
	// on m0, and copies 0 and 1 grant the lock.
	err := mustTryAcquire(t, rl, "after-move").Release(ctx)
	require.NoError(t, err)
	deadline := moved.Add(5 * time.Second)
	for !strings.Contains(logs.String(), sharedWarning) {
		require.True(t, time.Now().Before(deadline), "no warning within 5s of the migration")
		time.Sleep(clusterTick)
	}
	t.Logf("warned %v after the migration", time.Since(moved).Round(time.Millisecond))
	line := logs.String()[strings.Index(logs.String(), sharedWarning):]
	line = line[:strings.IndexByte(line, '\n')]
	assert.Contains(t, line, fmt.Sprintf("copies 0 (slot %d) and 2 (slot %d) on %s", slot0, slot2, m0.Addr()))

	reps, shared := rl.Placement(ctx)
	assert.True(t, shared)
	assert.Equal(t, m0.Addr(), reps[0].Master)
	assert.Equal(t, m0.Addr(), reps[2].Master)

	// Once per change, not per request.
	for i := range 5 {
		err := mustTryAcquire(t, rl, fmt.Sprintf("more-%d", i)).Release(ctx)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, strings.Count(logs.String(), sharedWarning), "the warning is logged once per change")

	// Errors name a copy by its slot and its master now.
	_, err = rl.TryAcquire(ctx, "job", clusterTTL)
	qe := acquireRefused(t, err)
	assert.Equal(t, m0.Addr(), qe.Nodes[2].Master)
	assert.Contains(t, err.Error(), fmt.Sprintf("slot %d (%s): ", slot2, m0.Addr()), "%v", err)
	assert.Equal(t, rl.Internal().Nodes()[2], qe.Nodes[2].Node, "Node stays the copy's stable name")
	err = l.Release(ctx)
	require.NoError(t, err)
}

// The same move, seen half-way: copy 2's keys are migrated first, and an
// acquisition is served by the new master after an ASK (a reply from a
// new server, but the slot map still names the old master: no warning).
// When the slot is then handed over, no reply comes from yet another
// server; redlock, which checks every second while a copy is unsettled,
// sees the shared master well before its 10s check would.
func TestClusterPlacementAfterAskedMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, rl, logs := startLoggedCluster(t, 3)
	slot2 := clusterkey.Slot(clusterkey.Tag(2, 3))
	m0, m2 := c.MasterOf(clusterkey.Slot(clusterkey.Tag(0, 3))), c.MasterOf(slot2)
	require.NotNil(t, m0)
	require.NotNil(t, m2)
	l, err := rl.TryAcquire(ctx, "job", clusterMaxTTL)
	require.NoError(t, err)
	src, dst := nodeClient(t, m2.Addr()), nodeClient(t, m0.Addr())
	dstID := migrateCopy2(t, src, dst, m0, slot2)

	// Copy 2's keys are all on m0: the old master sends ASK, and m0 runs
	// the script (and, its run_id not the marker's, starts a quarantine).
	_, err = rl.TryAcquire(ctx, "job", clusterTTL)
	acquireRefused(t, err)
	runM0 := infoField(t, dst, "server", "run_id")
	waitForCond(t, "copy 2 answered by m0 after an ASK", func() error {
		pipe := dst.Pipeline() // one connection: ASKING, then the read
		pipe.Do(ctx, "ASKING")
		r := pipe.HGet(ctx, "{"+clusterkey.Tag(2, 3)+"}:marker", "r")
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
		if r.Val() != runM0 {
			return fmt.Errorf("copy 2's marker on m0 names %q", r.Val())
		}
		return nil
	})

	for _, m := range c.Masters() {
		require.NoError(t, nodeClient(t, m.Addr()).Do(ctx, "CLUSTER", "SETSLOT", slot2, "NODE", dstID).Err())
	}
	handed := time.Now()
	deadline := handed.Add(5 * time.Second)
	for i := 0; !strings.Contains(logs.String(), sharedWarning); i++ {
		require.True(t, time.Now().Before(deadline), "no warning within 5s of the hand-over")
		err := mustTryAcquire(t, rl, fmt.Sprintf("after-%d", i)).Release(ctx)
		require.NoError(t, err)
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("warned %v after the hand-over", time.Since(handed).Round(time.Millisecond))
	assert.Equal(t, 1, strings.Count(logs.String(), sharedWarning))
	err = l.Release(ctx)
	require.NoError(t, err)
}

// migrateCopy2 sets slot2 migrating from src to dst (m0's client) and
// moves its keys there, once copy 2 of "job" is on src; it returns dst's
// cluster node ID.
func migrateCopy2(t *testing.T, src, dst *redis.Client, m0 *redistest.Server, slot2 uint16) string {
	ctx := context.Background()
	// Copy 2 has the lock, its counter and the marker (TryAcquire returns
	// at a majority: wait for the third copy).
	for _, k := range []string{copyKey(2, 3, "job"), copyKey(2, 3, "job") + ":fence", "{" + clusterkey.Tag(2, 3) + "}:marker"} {
		waitForCond(t, "copy 2's "+k, func() error {
			if n := src.Exists(ctx, k).Val(); n != 1 {
				return fmt.Errorf("%s: not there", k)
			}
			return nil
		})
	}
	srcID, dstID := src.ClusterMyID(ctx).Val(), dst.ClusterMyID(ctx).Val()
	require.NoError(t, dst.Do(ctx, "CLUSTER", "SETSLOT", slot2, "IMPORTING", srcID).Err())
	require.NoError(t, src.Do(ctx, "CLUSTER", "SETSLOT", slot2, "MIGRATING", dstID).Err())
	keys, err := src.ClusterGetKeysInSlot(ctx, int(slot2), 100).Result()
	require.NoError(t, err)
	args := []any{"MIGRATE", "127.0.0.1", m0.Port(), "", 0, 1000, "KEYS"}
	for _, k := range keys {
		args = append(args, k)
	}
	require.NoError(t, src.Do(ctx, args...).Err())
	return dstID
}
