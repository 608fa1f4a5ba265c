package lease

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/internal/permitkey"
	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/redlock"
)

// K holders get the K permits, each a lease on its own key; the next one
// gets none until a permit is released, and then that one, woken by the
// release notice (RetryDelay is far longer than the test waits).
func TestPermitsAtMostK(t *testing.T) {
	ctx := context.Background()
	ms, nodes := testnodes.Minis(t, 3)
	c := newClient(t, redlock.Config{NodeTimeout: time.Second}, nodes)
	cfg := Config{Permits: 3, RetryDelay: time.Hour}
	seen := map[int]*Lease{}
	for range 3 {
		l := mustAcquire(t, ctx, c, "sem", cfg)
		h := l.Holder()
		require.NotContains(t, seen, h.Permit, "permit %d handed out twice", h.Permit)
		assert.Equal(t, permitkey.Key("sem", h.Permit), h.Key)
		testnodes.WaitValue(t, ms, h.Key, h.Value)
		seen[h.Permit] = l
	}
	assert.Len(t, seen, 3)
	_, err := TryAcquire(ctx, c, "sem", cfg)
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	assert.Contains(t, err.Error(), "none of the 3 permits was free")

	got := make(chan *Lease, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		l, err := Acquire(context.WithoutCancel(wctx), c, "sem", cfg)
		assert.NoError(t, err)
		got <- l
	}()
	first := seen[1].Token()
	require.NoError(t, seen[1].Release(ctx))
	l := <-got
	require.NotNil(t, l)
	defer func() { _ = l.Release(ctx) }()
	assert.Equal(t, 1, l.Holder().Permit)
	assert.Equal(t, "sem:permit:1", l.Holder().Key)
	assert.Greater(t, l.Token(), first, "the permit's token orders its holders")
}

// A plain lease on a name is permit 0 of the semaphore of that name.
func TestPermitZeroIsTheKey(t *testing.T) {
	ctx := context.Background()
	_, nodes := testnodes.Minis(t, 3)
	c := newClient(t, redlock.Config{NodeTimeout: time.Second}, nodes)
	plain := mustAcquire(t, ctx, c, "jobs", Config{})
	assert.Equal(t, 0, plain.Holder().Permit)
	l := mustAcquire(t, ctx, c, "jobs", Config{Permits: 2})
	assert.Equal(t, 1, l.Holder().Permit)
	_, err := TryAcquire(ctx, c, "jobs", Config{Permits: 2})
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
}

func TestPermitsConfig(t *testing.T) {
	_, nodes := testnodes.Minis(t, 1)
	c := newClient(t, redlock.Config{NodeTimeout: time.Second}, nodes)
	for _, k := range []int{-1, permitkey.Max + 1} {
		_, err := TryAcquire(context.Background(), c, "sem", Config{Permits: k})
		require.ErrorIs(t, err, redlock.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "Permits (")
	}
	long := strings.Repeat("k", 4090)
	_, err := TryAcquire(context.Background(), c, long, Config{Permits: 20})
	require.ErrorIs(t, err, redlock.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "permit 19 of the semaphore")
}

func TestPermitNotices(t *testing.T) {
	a := &acquirer{key: "sem", k: 4}
	for payload, want := range map[string]int{
		notice.Message{Kind: notice.Released, Value: "sem:permit:2"}.Encode(): 2,
		notice.Message{Kind: notice.Released, Value: "sem"}.Encode():          0,
		notice.Message{Kind: notice.Released}.Encode():                        -1,
		"something new": -1,
	} {
		i, ok := a.released(payload)
		assert.True(t, ok, payload)
		assert.Equal(t, want, i, payload)
	}
	for _, payload := range []string{
		notice.Message{Kind: notice.Released, Value: "sem:permit:4"}.Encode(), // above our permits
		notice.Message{Kind: notice.Released, Value: "other"}.Encode(),
		notice.Message{Kind: notice.Acquired, Value: "v"}.Encode(),
	} {
		_, ok := a.released(payload)
		assert.False(t, ok, payload)
	}
}
