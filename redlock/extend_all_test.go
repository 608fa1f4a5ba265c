package redlock

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/testnodes"
)

// ExtendAll gives each lock the result Extend would: extended, not
// extended (a majority no longer holds it: never re-created), not held
// (released), and a bad argument for a lock of another client; batches
// beyond MaxExtendBatch are split. (The locks' TTL is MaxTTL: acquiring
// MaxExtendBatch+10 of them one by one took 13s on a loaded host, and a
// 10s lock had lapsed before ExtendAll.)
func TestExtendAll(t *testing.T) {
	ctx := context.Background()
	ms, c := unitNodes(t, 5)
	const n = MaxExtendBatch + 10
	locks := make([]*Lock, n)
	for i := range locks {
		locks[i] = acquired(t, c, ms, fmt.Sprint("ea-", i), DefaultMaxTTL)
	}
	for _, m := range ms[:3] {
		m.Del("ea-1") // gone on a majority
	}
	err := locks[2].Release(ctx)
	require.NoError(t, err)
	_, others := testnodes.Minis(t, 3)
	other := newClient(t, unitCfg, others)
	foreign, err := other.TryAcquire(ctx, "foreign", DefaultMaxTTL)
	require.NoError(t, err)

	before := make([]time.Time, n)
	for i, l := range locks {
		before[i] = l.ValidUntil()
	}
	errs := c.ExtendAll(ctx, append(locks, foreign, nil))
	require.Len(t, errs, n+2)
	require.NoError(t, errs[0])
	assert.True(t, locks[0].ValidUntil().After(before[0]))
	require.ErrorIs(t, errs[1], ErrNotExtended)
	var qe *QuorumError
	require.True(t, errors.As(errs[1], &qe))
	no := 0
	for _, r := range qe.Nodes {
		if !r.Yes && r.Err == nil && !r.Quarantined {
			no++
		}
	}
	assert.Equal(t, 3, no, "three nodes said the key is no longer ours")
	for _, m := range ms[:3] {
		assert.False(t, m.Exists("ea-1"), "ExtendAll re-created a key")
	}
	assert.Equal(t, before[1], locks[1].ValidUntil(), "a failed extend keeps the old deadline")
	require.ErrorIs(t, errs[2], ErrNotHeld)
	for i := 3; i < n; i++ {
		require.NoError(t, errs[i], "lock %d", i)
		require.True(t, locks[i].ValidUntil().After(before[i]))
	}
	require.ErrorIs(t, errs[n], ErrInvalidArgument)
	require.ErrorIs(t, errs[n+1], ErrInvalidArgument)
}

// ExtendAll extends each lock to its own TTL (locks of two TTLs go in
// separate calls, as extend_many takes one TTL), sets the fencing counters'
// TTL only for a batch where it is due, and answers "not ours" for a lock
// key that holds another type, without failing the rest of its call.
func TestExtendAllTTLsAndCounters(t *testing.T) {
	ctx := context.Background()
	ms, c, locks := startExtendAllLocks(t)
	counterTTL := time.Duration(CounterTTLFactor) * c.cfg.MaxTTL

	// Counters set recently (at the acquisition): their TTL is left alone.
	setCounterTTLs(ms, len(locks), time.Minute)
	checkExtendAllNotDue(t, ms, c, locks)

	// Due (a lock's counter TTL was set a quarter of its TTL ago): the
	// counters of the batch's extended locks get it again.
	locks[1].mu.Lock()
	locks[1].fencedAt = locks[1].fencedAt.Add(-counterTTL / 2)
	locks[1].mu.Unlock()
	errs := c.ExtendAll(ctx, locks[:4])
	for i := range 4 {
		require.NoError(t, errs[i], "lock %d", i)
	}
	for _, m := range ms {
		for i, ttl := range extendAllTTLs[:4] {
			assertTTL(t, ttl, m.TTL(fmt.Sprint("ttl-", i)), "lock %d", i)
			want := time.Minute // the batch of TTL 3s was not due
			if ttl == 7*time.Second {
				want = counterTTL
			}
			// ExtendAll returns at a majority: the last node's call may
			// land a moment later.
			key := fmt.Sprint("ttl-", i, ":fence")
			require.Eventually(t, func() bool { return m.TTL(key) == want }, 5*time.Second, time.Millisecond,
				"lock %d: counter TTL %v, want %v", i, m.TTL(key), want)
		}
	}
}

// extendAllTTLs are the TTLs of TestExtendAllTTLsAndCounters' locks.
var extendAllTTLs = []time.Duration{3 * time.Second, 7 * time.Second, 3 * time.Second, 7 * time.Second, 3 * time.Second}

// startExtendAllLocks takes a lock "ttl-i" of each of extendAllTTLs on
// three nodes, the last of which then holds a hash instead.
func startExtendAllLocks(t *testing.T) ([]*miniredis.Miniredis, *Client, []*Lock) {
	ms, c := unitNodes(t, 3)
	locks := make([]*Lock, len(extendAllTTLs))
	for i, ttl := range extendAllTTLs {
		locks[i] = acquired(t, c, ms, fmt.Sprint("ttl-", i), ttl)
	}
	for _, m := range ms {
		m.Del("ttl-4")
		m.HSet("ttl-4", "f", "v") // another type: never ours
	}
	return ms, c, locks
}

// setCounterTTLs sets the TTL of the fencing counters of n locks.
func setCounterTTLs(ms []*miniredis.Miniredis, n int, ttl time.Duration) {
	for _, m := range ms {
		for i := range n {
			m.SetTTL(fmt.Sprint("ttl-", i, ":fence"), ttl)
		}
	}
}

// checkExtendAllNotDue: ExtendAll extends the first four locks, leaves
// their counters' TTL alone, and answers no for the hash.
func checkExtendAllNotDue(t *testing.T, ms []*miniredis.Miniredis, c *Client, locks []*Lock) {
	errs := c.ExtendAll(context.Background(), locks)
	for i := range 4 {
		require.NoError(t, errs[i], "lock %d", i)
	}
	require.ErrorIs(t, errs[4], ErrNotExtended)
	var qe *QuorumError
	require.ErrorAs(t, errs[4], &qe)
	no := 0
	for _, r := range qe.Nodes {
		if !r.Yes && r.Err == nil {
			no++
		}
	}
	assert.GreaterOrEqual(t, no, 2, "a key of another type is not ours (a no, not an error): %v", qe)
	for _, m := range ms {
		for i, ttl := range extendAllTTLs[:4] {
			assertTTL(t, ttl, m.TTL(fmt.Sprint("ttl-", i)), "lock %d", i)
			assert.Equal(t, time.Minute, m.TTL(fmt.Sprint("ttl-", i, ":fence")), "lock %d: counter TTL set when not due", i)
		}
		assert.Equal(t, "hash", m.Type("ttl-4"))
	}
}

// assertTTL checks a key's TTL after an extend_many call, which sets it
// with PEXPIREAT at the server's time plus the TTL: the TTL itself, less
// the time since (and up to 1ms of TIME's rounding), never more.
func assertTTL(t *testing.T, want, got time.Duration, msgAndArgs ...any) {
	t.Helper()
	assert.LessOrEqual(t, got, want, msgAndArgs...)
	assert.Greater(t, got, want-time.Second, msgAndArgs...)
}
