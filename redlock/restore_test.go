package redlock

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/redlockx"
	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/internal/unsafeopt"
)

// restoreRig is a client of 3 in-memory nodes holding one lock, key, whose
// copy on node 2 is then deleted; logs has the client's log.
type restoreRig struct {
	ms   []*miniredis.Miniredis
	c    *Client
	l    *Lock
	key  string
	logs *testnodes.LogBuffer
}

func newRestoreRig(t *testing.T, off unsafeopt.Off) *restoreRig {
	t.Helper()
	ms, nodes := testnodes.Minis(t, 3)
	logs := &testnodes.LogBuffer{T: t}
	cfg := unitCfg
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: logs})
	turnOff(t, &cfg, off)
	c := newClient(t, cfg, nodes)
	l, err := c.TryAcquire(context.Background(), "rs", 10*time.Second)
	require.NoError(t, err)
	testnodes.WaitValue(t, ms, "rs", l.Value())
	require.Eventually(t, l.Settled, 5*time.Second, 5*time.Millisecond)
	ms[2].Del("rs")
	return &restoreRig{ms: ms, c: c, l: l, key: "rs", logs: logs}
}

// settled waits until every restore of the rig's client has answered
// (they run in the background; Close waits for them).
func (r *restoreRig) settled(t *testing.T) {
	t.Helper()
	require.NoError(t, r.c.Close())
}

// A copy that a node lost is put back after the next extension
// (Lock.Extend and ExtendAll): our value, a TTL no longer than the lock's,
// the node's counter raised to the token and its h to at least the token;
// logged once, and counted as a spare again (#36 item 5).
func TestRestoreMissingCopy(t *testing.T) {
	for _, batched := range []bool{false, true} {
		t.Run(map[bool]string{false: "Extend", true: "ExtendAll"}[batched], func(t *testing.T) {
			r := newRestoreRig(t, unsafeopt.Off{})
			tok := strconv.FormatUint(r.l.Token(), 10)
			r.ms[2].Set(r.key+":fence", "1") // below the token
			if batched {
				require.NoError(t, r.c.ExtendAll(context.Background(), []*Lock{r.l})[0])
			} else {
				require.NoError(t, r.l.Extend(context.Background(), 0))
			}
			testnodes.WaitValue(t, r.ms[2:], r.key, r.l.Value())
			require.Eventually(t, func() bool { return r.l.spare() == 1 }, 5*time.Second, 5*time.Millisecond)
			ttl := r.ms[2].TTL(r.key)
			assert.True(t, ttl > 0 && ttl <= 10*time.Second, "TTL %v", ttl)
			c, _ := r.ms[2].Get(r.key + ":fence")
			assert.Equal(t, tok, c, "counter raised to the token")
			h := r.ms[2].HGet(markerKey, "h")
			hv, _ := strconv.ParseUint(h, 10, 64)
			assert.GreaterOrEqual(t, hv, r.l.Token(), "h %s below the token", h)
			require.Eventually(t, func() bool { return r.logs.Count("lock copy restored on a node") == 1 }, 5*time.Second, 5*time.Millisecond)
			assert.Equal(t, 1, r.logs.Count("[INFO]", "restored", "holding=3", "spare=1"), r.logs.String())
		})
	}
}

// A restore never overwrites a value it finds (another holder's), and
// restores nothing where the node's counter is above the token (it is
// never lowered).
func TestRestoreLeavesOthersAlone(t *testing.T) {
	t.Run("another value", func(t *testing.T) {
		r := newRestoreRig(t, unsafeopt.Off{})
		r.ms[2].Set(r.key, "someone-else")
		require.NoError(t, r.l.Extend(context.Background(), 0))
		r.settled(t)
		got, _ := r.ms[2].Get(r.key)
		assert.Equal(t, "someone-else", got)
		assert.Zero(t, r.ms[2].TTL(r.key), "its TTL was changed")
		assert.Equal(t, 0, r.l.spare())
	})
	t.Run("counter above the token", func(t *testing.T) {
		r := newRestoreRig(t, unsafeopt.Off{})
		above := strconv.FormatUint(r.l.Token()+5, 10)
		r.ms[2].Set(r.key+":fence", above)
		require.NoError(t, r.l.Extend(context.Background(), 0))
		r.settled(t)
		assert.False(t, r.ms[2].Exists(r.key), "restored at a counter above the token")
		c, _ := r.ms[2].Get(r.key + ":fence")
		assert.Equal(t, above, c, "the counter was changed")
	})
}

// Nothing is restored once the lock's local deadline has passed (S4),
// though the extension that found the copy missing had succeeded; with
// unsafeopt RestoreLate (the control), the same restore puts it back.
func TestRestoreNotAfterDeadline(t *testing.T) {
	for _, late := range []bool{false, true} {
		t.Run(map[bool]string{false: "guarded", true: "control"}[late], func(t *testing.T) {
			r := newRestoreRig(t, unsafeopt.Off{RestoreLate: late})
			require.True(t, r.l.restorable(r.l.validFrom), "restorable before its deadline")
			r.l.mu.Lock()
			r.l.validUntil = time.Now().Add(-time.Millisecond) // as if the deadline passed after the extension
			r.l.mu.Unlock()
			require.NoError(t, r.c.enter())
			restoreOn(r.c, r.l.validFrom, r.l.nodes[2], r.l.ttl, []*Lock{r.l})
			r.c.mu.RUnlock()
			r.settled(t)
			assert.Equal(t, late, r.ms[2].Exists(r.key))
		})
	}
}

// With unsafeopt NoRestore (the control of the restore), the copy stays
// missing.
func TestRestoreOffControl(t *testing.T) {
	r := newRestoreRig(t, unsafeopt.Off{NoRestore: true})
	require.NoError(t, r.l.Extend(context.Background(), 0))
	r.settled(t)
	assert.False(t, r.ms[2].Exists(r.key))
	assert.Equal(t, 0, r.l.spare())
}

// A restore that lands after the lock's release is deleted with the
// release's notice, so that a waiter subscribed on that node hears of the
// release from it too (it was deleted silently, as an acquisition's
// stragglers were before).
func TestRestoreAfterReleasePublishesNotice(t *testing.T) {
	ms, nodes := testnodes.Minis(t, 3)
	c := newClient(t, unitCfg, nodes)
	ctx := context.Background()
	const channel, msg = "restore/notice", "released"
	l, err := c.TryAcquire(ctx, "rn", 10*time.Second, redlockx.ReleaseNotice(channel, msg))
	require.NoError(t, err)
	require.Eventually(t, l.Settled, 5*time.Second, 5*time.Millisecond)
	sub := nodes[2].Subscribe(ctx, channel)
	t.Cleanup(func() { _ = sub.Close() })
	_, err = sub.Receive(ctx) // the subscription's confirmation
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
	receive(t, sub, msg, "the release's own notice from node 2")

	// A restore of node 2's copy that was on its way lands now.
	ms[2].Set("rn", l.Value())
	l.restored(time.Now(), l.nodes[2]) // deletes it before it returns
	assert.False(t, ms[2].Exists("rn"), "the restored copy outlived the release")
	receive(t, sub, msg, "the restored copy was deleted without the release notice")
}

// receive waits up to 10s for msg on sub.
func receive(t *testing.T, sub *redis.PubSub, msg, what string) {
	t.Helper()
	select {
	case m := <-sub.Channel():
		require.Equal(t, msg, m.Payload, what)
	case <-time.After(10 * time.Second):
		t.Fatal(what + ": no notice within 10s")
	}
}
