package sim

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPubSub: SUBSCRIBE hears PUBLISH, and SSUBSCRIBE hears SPUBLISH,
// each on its own channel namespace, as on a real server. (SUBSCRIBE was
// filed as a shard subscription, so PUBLISH reached nobody: the
// elections' notices never arrived in the simulator.) A message takes
// noticeHop of virtual time to arrive.
func TestPubSub(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		w := NewWorld(Options{Seed: 1, OnUnknown: func(a []string) { t.Errorf("unknown command %q", a) }})
		w.Listen("n1:6379", w.NewServer("n1"))
		sub, pub := newClient(w, "c1", "n1:6379"), newClient(w, "c2", "n1:6379")
		defer sub.Close()
		defer pub.Close()
		ps := sub.Subscribe(ctx, "ch")
		defer ps.Close()
		_, err := ps.Receive(ctx) // the subscription's confirmation
		require.NoError(t, err)
		sps := sub.SSubscribe(ctx, "sch")
		defer sps.Close()
		_, err = sps.Receive(ctx)
		require.NoError(t, err)

		start := time.Now()
		n, err := pub.Publish(ctx, "ch", "hello").Result()
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "PUBLISH reaches the SUBSCRIBE")
		m, err := ps.ReceiveMessage(ctx)
		require.NoError(t, err)
		require.Equal(t, "hello", m.Payload)
		require.Equal(t, noticeHop, time.Since(start), "a message takes noticeHop of virtual time to arrive")

		n, err = pub.SPublish(ctx, "sch", "shard").Result()
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "SPUBLISH reaches the SSUBSCRIBE")
		m, err = sps.ReceiveMessage(ctx)
		require.NoError(t, err)
		require.Equal(t, "shard", m.Payload)
		n, err = pub.Publish(ctx, "sch", "other").Result()
		require.NoError(t, err)
		require.Zero(t, n, "PUBLISH does not reach an SSUBSCRIBE")
	})
}
