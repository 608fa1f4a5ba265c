package observer

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// A Watch of a semaphore lists who holds which permit, and how many are
// free; a release is seen by its notice (PollInterval is far longer than
// the test waits).
func TestWatchPermits(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, nodes := testnodes.Minis(t, 3)
	c := newClient(t, nodes)
	o, err := New(c, "sem", Config{Permits: 3, PollInterval: time.Hour})
	require.NoError(t, err)
	_, err = o.Leader(ctx)
	require.ErrorIs(t, err, redlock.ErrInvalidArgument, "a semaphore has no leader")

	cfg := lease.Config{ID: "w1", Permits: 3}
	a, err := lease.TryAcquire(ctx, c, "sem", cfg)
	require.NoError(t, err)
	defer func() { _ = a.Release(context.Background()) }()
	cfg.ID = "w2"
	b, err := lease.TryAcquire(ctx, c, "sem", cfg)
	require.NoError(t, err)
	defer func() { _ = b.Release(context.Background()) }()

	w := o.Watch(ctx)
	ev := next(t, w)
	require.NoError(t, ev.Err)
	require.Len(t, ev.Holders, 3)
	free := 0
	for i, h := range ev.Holders {
		assert.Equal(t, i, h.Permit)
		switch h.Permit {
		case a.Holder().Permit:
			assert.Equal(t, "w1", h.ID)
			assert.Equal(t, a.Token(), h.Token)
			assert.Equal(t, a.Holder().Key, h.Key)
		case b.Holder().Permit:
			assert.Equal(t, "w2", h.ID)
		default:
			assert.Empty(t, h.Value)
			free++
		}
	}
	assert.Equal(t, 1, free)
	assert.Contains(t, ev.String(), "2 of 3 permits held (1 free): ")

	require.NoError(t, a.Release(ctx))
	ev = next(t, w)
	assert.Empty(t, ev.Holders[a.Holder().Permit].Value, "the released permit is free")
	assert.Equal(t, "w2", ev.Holders[b.Holder().Permit].ID)
	assert.Contains(t, ev.String(), "1 of 3 permits held (2 free)")
}

func TestPermitsConfig(t *testing.T) {
	for _, k := range []int{-1, 1025} {
		_, err := New(&redlock.Client{}, "sem", Config{Permits: k})
		require.ErrorIs(t, err, redlock.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "Permits (")
	}
	assert.False(t, permitsChanged([]redlock.Holder{{Value: "a", Token: 2}}, []redlock.Holder{{Value: "a", Token: 1}}),
		"a token never goes back in a watch")
	assert.True(t, permitsChanged([]redlock.Holder{{Value: "a", Token: 1}}, []redlock.Holder{{Value: "a", Token: 2}}))
	assert.True(t, permitsChanged([]redlock.Holder{{Value: "a"}}, []redlock.Holder{{}}))
}
