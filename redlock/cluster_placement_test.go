package redlock_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/redistest"
	"github.com/redlease/redlease/redlock"
)

// rcSharedWarning is the warning of a placement where two copies share a
// master.
const rcSharedWarning = "two copies of every lock share a master"

// A lock slot migrates so that copies 0 and 2 share a master. The next
// acquisition follows go-redis' MOVED to the new master, so copy 2's reply
// comes from another server than before (its run_id): redlock checks the
// placement again and logs the warning, once, naming the copies by slot and
// master, well before its periodic check (10s) could have. Errors name
// each copy by its slot and its current master.
func TestClusterPlacementAfterMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := redistest.StartCluster(t, 3, 0)
	logs := &rcLogBuffer{t: t}
	cfg := rcCfg
	cfg.Logger = rcLogger(t, logs)
	rl := rcNewCluster(t, cfg, rcClusterClient(t, c.Addrs()), 3, true)
	slot0, slot2 := redlock.Slot(redlock.ClusterTag(0, 3)), redlock.Slot(redlock.ClusterTag(2, 3))
	m0, m2 := c.MasterOf(slot0), c.MasterOf(slot2)
	require.NotNil(t, m0)
	require.NotNil(t, m2)
	_, shared := rl.Placement(ctx)
	require.False(t, shared)
	l := rcTryAcquire(t, rl, "job")
	require.NotContains(t, logs.String(), rcSharedWarning)

	require.NoError(t, c.MigrateSlot(slot2, m0))
	moved := time.Now()
	// The first acquisition after the move: go-redis follows the MOVED.
	// Copy 2's marker moved with the slot and names m2: it is quarantined
	// on m0, and copies 0 and 1 grant the lock.
	_, err := rcTryAcquire(t, rl, "after-move").Release(ctx)
	require.NoError(t, err)
	deadline := moved.Add(5 * time.Second)
	for !strings.Contains(logs.String(), rcSharedWarning) {
		require.True(t, time.Now().Before(deadline), "no warning within 5s of the migration")
		time.Sleep(rcTick)
	}
	t.Logf("warned %v after the migration", time.Since(moved).Round(time.Millisecond))
	line := logs.String()[strings.Index(logs.String(), rcSharedWarning):]
	line = line[:strings.IndexByte(line, '\n')]
	assert.Contains(t, line, fmt.Sprintf("copies 0 (slot %d) and 2 (slot %d) on %s", slot0, slot2, m0.Addr()))

	reps, shared := rl.Placement(ctx)
	assert.True(t, shared)
	assert.Equal(t, m0.Addr(), reps[0].Master)
	assert.Equal(t, m0.Addr(), reps[2].Master)

	// Once per change, not per request.
	for i := range 5 {
		_, err := rcTryAcquire(t, rl, fmt.Sprintf("more-%d", i)).Release(ctx)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, strings.Count(logs.String(), rcSharedWarning), "the warning is logged once per change")

	// Errors name a copy by its slot and its master now.
	_, err = rl.TryAcquire(ctx, "job", rcTTL)
	qe := rcQuorumError(t, err)
	assert.Equal(t, m0.Addr(), qe.Nodes[2].Master)
	assert.Contains(t, err.Error(), fmt.Sprintf("slot %d (%s): ", slot2, m0.Addr()), "%v", err)
	assert.Equal(t, rl.Nodes()[2], qe.Nodes[2].Node, "Node stays the copy's stable name")
	_, err = l.Release(ctx)
	require.NoError(t, err)
}
