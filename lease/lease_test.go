package lease

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redlease/redlease/internal/testing/testnodes"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/redlock"
)

func TestAcquireReleaseTwice(t *testing.T) {
	ctx := context.Background()
	ms, nodes := testnodes.Minis(t, 3)
	c := newClient(t, redlock.Config{NodeTimeout: time.Second}, nodes)
	cfg := Config{ID: "worker-7", Metadata: map[string]string{"addr": "10.0.0.7:8080"}}
	l := mustAcquire(t, ctx, c, "twice", cfg)

	assert.Equal(t, "twice", l.Holder().Key)
	assert.True(t, l.Held())
	assert.NoError(t, context.Cause(l.Context()))
	assert.Equal(t, uint64(1), l.Token())
	h := l.Holder()
	assert.Equal(t, "worker-7", h.ID)
	assert.Equal(t, map[string]string{"addr": "10.0.0.7:8080"}, h.Metadata)
	assert.Equal(t, "twice", h.Key)
	assert.Equal(t, l.Token(), h.Token)
	assert.Equal(t, l.ValidUntil(), h.Expires)
	assert.Equal(t, "worker-7", h.String())
	h.Metadata["addr"] = "changed"
	assert.Equal(t, "10.0.0.7:8080", l.Holder().Metadata["addr"], "Holder returns a copy")
	// Every node gets the value (the slowest may land after Acquire returned).
	testnodes.WaitValue(t, ms, "twice", h.Value)

	require.NoError(t, l.Release(ctx))
	require.NoError(t, l.Release(ctx), "releasing twice is fine")
	assert.ErrorIs(t, context.Cause(l.Context()), ErrReleased)
	assert.ErrorIs(t, context.Cause(l.Context()), ErrReleased)
	assert.False(t, l.Held())
	assert.True(t, closed(l.Context().Done()))
	testnodes.WaitValue(t, ms, "twice", "")

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	l2 := mustAcquire(t, ctx, c, "twice", cfg)
	// A cancelled ctx does not stop the release, but the error says it ended (#32).
	require.ErrorIs(t, l2.Release(cancelled), context.Canceled)
	testnodes.WaitValue(t, ms, "twice", "")
	require.NoError(t, l2.Release(ctx), "the deletion's own result: the keys are gone")
}

// Release, from many goroutines at once, while the lease refreshes as
// fast as it can; run with -race.
func TestReleaseRacesRefresh(t *testing.T) {
	ctx := context.Background()
	ms, nodes := testnodes.Minis(t, 3)
	// A NodeTimeout far above a round trip: the test is about races, and a
	// loaded machine must not turn a stall into a failed release.
	c := newClient(t, redlock.Config{NodeTimeout: time.Second}, nodes)
	cfg := Config{TTL: 3 * time.Second, RenewInterval: time.Millisecond, RetryInterval: time.Millisecond, SafetyMargin: 100 * time.Millisecond}
	for i := range 20 {
		key := fmt.Sprintf("race-%d", i)
		l := mustAcquire(t, ctx, c, key, cfg)
		// Wait for a refresh to have landed: ValidUntil moves forward.
		first := l.ValidUntil()
		for l.ValidUntil().Equal(first) {
			select {
			case <-l.Context().Done():
				t.Fatalf("lease ended: %v", context.Cause(l.Context()))
			case <-time.After(time.Millisecond):
			}
		}
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for j := range errs {
			wg.Go(func() { errs[j] = l.Release(ctx) })
			wg.Go(func() { _, _, _, _ = l.Held(), context.Cause(l.Context()), l.ValidUntil(), l.deadline() })
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		require.ErrorIs(t, context.Cause(l.Context()), ErrReleased)
		require.False(t, l.Held())
		testnodes.WaitValue(t, ms, key, "") // a refresh in flight cannot bring it back: extends never create keys, and a restore that lands after the release is deleted
	}
}

func TestAcquireArguments(t *testing.T) {
	ctx := context.Background()
	_, nodes := testnodes.Minis(t, 1)
	c := newClient(t, redlock.Config{NodeTimeout: 100 * time.Millisecond, MaxTTL: 20 * time.Second}, nodes)

	_, err := Acquire(ctx, nil, "k", Config{})
	require.ErrorIs(t, err, redlock.ErrInvalidArgument)
	_, err = TryAcquire(ctx, c, "", Config{})
	require.ErrorIs(t, err, redlock.ErrInvalidArgument)

	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"TTL above MaxTTL", Config{TTL: 30 * time.Second}, "TTL (30s) is above MaxTTL (20s)"},
		{"TTL too short for NodeTimeout", Config{TTL: 200 * time.Millisecond}, "TTL (200ms) must exceed NodeTimeout*2 + drift (204ms)"},
		{"no room for drift", Config{TTL: 10 * time.Second, RenewInterval: 9 * time.Second, SafetyMargin: 950 * time.Millisecond},
			"RenewInterval + SafetyMargin (9s + 950ms) must be below TTL - drift (10s - 102ms)"},
		{"invalid config", Config{TTL: -time.Second}, "TTL (-1s) must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Acquire(ctx, c, "k", tc.cfg)
			require.ErrorIs(t, err, redlock.ErrInvalidArgument)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestInspectReadsTheLeasesHolder: redlock's majority read decodes what a
// lease writes: the same Holder as the lease's own, but for its timing.
func TestInspectReadsTheLeasesHolder(t *testing.T) {
	ctx := context.Background()
	_, nodes := testnodes.Minis(t, 3)
	c := newClient(t, redlock.Config{NodeTimeout: time.Second}, nodes)

	info, err := c.Inspect(ctx, "inspected")
	require.ErrorIs(t, err, redlock.ErrNoHolder)
	require.NotNil(t, info)
	assert.Equal(t, redlock.Holder{Key: "inspected"}, info.Holder)
	assert.Equal(t, "none", info.String())
	assert.Len(t, info.Nodes, 3)

	l := mustAcquire(t, ctx, c, "inspected", Config{ID: "web 1: eu", Metadata: map[string]string{"zone": "eu-west-1"}})
	info, err = c.Inspect(ctx, "inspected")
	require.NoError(t, err)
	own := l.Holder()
	assert.Equal(t, "web 1: eu", info.ID)
	assert.Equal(t, map[string]string{"zone": "eu-west-1"}, info.Metadata)
	assert.Equal(t, own.Value, info.Value)
	assert.Equal(t, own.Token, info.Token)
	assert.Equal(t, own.Key, info.Key)
	assert.Greater(t, info.Remaining, 9*time.Second)
	assert.LessOrEqual(t, info.Remaining, defaultTTL)
	assert.WithinDuration(t, own.Expires, info.Expires, time.Second)

	// A lock of a plain Redlock client is a foreign holder.
	plain, err := c.TryAcquire(ctx, "plain", 5*time.Second)
	require.NoError(t, err)
	defer plain.Release(ctx)
	info, err = c.Inspect(ctx, "plain")
	require.NoError(t, err)
	assert.Empty(t, info.ID)
	assert.Equal(t, plain.Value(), info.Value)
	assert.Equal(t, "foreign:"+plain.Value(), info.String())
}
