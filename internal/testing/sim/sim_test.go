package sim

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/redlock"
)

func newClient(w *World, client, addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, Dialer: w.Dialer(client), Protocol: 2,
		DisableIdentity: true, MaxRetries: 1, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond,
		DialTimeout: 500 * time.Millisecond, PoolSize: 4,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
}

func TestRedlockOnSimulatedServers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		w := NewWorld(Options{Seed: 1, OnUnknown: func(a []string) { t.Errorf("unknown command %q", a) }})
		var nodes []redis.UniversalClient
		for _, a := range []string{"n1:6379", "n2:6379", "n3:6379"} {
			w.Listen(a, w.NewServer(a))
			c := newClient(w, "c1", a)
			defer c.Close()
			nodes = append(nodes, c)
		}
		rc, err := redlock.New(ctx, redlock.Config{MaxTTL: 2 * time.Second}, nodes...)
		require.NoError(t, err)
		defer rc.Close()
		_, err = rc.TryAcquire(ctx, "k", time.Second)
		require.ErrorIs(t, err, redlock.ErrNotAcquired) // quarantined for MaxTTL
		time.Sleep(2 * time.Second)
		actx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		l, err := rc.Acquire(actx, "k", time.Second)
		require.NoError(t, err)
		// Not necessarily 1: an attempt that met some nodes raised and
		// others not yet (the readiness pass runs beside it) leaves a gap.
		first := l.Token()
		require.Positive(t, first)
		require.NoError(t, l.Extend(ctx, time.Second))
		err = l.Release(ctx)
		require.NoError(t, err)
		l, err = rc.TryAcquire(ctx, "k", time.Second)
		require.NoError(t, err)
		require.Greater(t, l.Token(), first)
		t.Log(w.Stats())
	})
}
