package redlock

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redlease/redlease/internal/testing/testnodes"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// roundTrips counts the round trips a go-redis client makes: one per
// command sent alone, one per pipeline.
type roundTrips struct{ n atomic.Int64 }

func (h *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.n.Add(1); return next(ctx, cmd) }
}
func (h *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.n.Add(1); return next(ctx, cmds) }
}

// Many locks refreshed at once share round trips to each node.
func TestExtendsAreBatched(t *testing.T) {
	ctx := context.Background()
	_, nodes := testnodes.Minis(t, 3)
	hooks := make([]*roundTrips, len(nodes))
	for i, n := range nodes {
		hooks[i] = &roundTrips{}
		n.AddHook(hooks[i])
	}
	// 300 scripts at once on miniredis under -race once took a loaded host
	// over 5s to answer; 100 make the same point, and each request has 15s.
	c := newClient(t, Config{NodeTimeout: 15 * time.Second, MaxTTL: time.Minute}, nodes)

	const locks = 100
	ls := make([]*Lock, locks)
	for i := range ls {
		var err error
		ls[i], err = c.TryAcquire(ctx, "batch:"+string(rune('a'+i%26))+string(rune('a'+i/26)), 40*time.Second)
		require.NoError(t, err)
	}
	before := hooks[0].n.Load()
	var wg sync.WaitGroup
	errs := make(chan error, locks)
	for _, l := range ls {
		wg.Go(func() { errs <- l.Extend(ctx, 0) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	trips := hooks[0].n.Load() - before
	t.Logf("%d extends took %d round trips to node 0", locks, trips)
	assert.Less(t, trips, int64(locks/2), "extends were not batched")
	for _, l := range ls {
		err := l.Release(ctx)
		require.NoError(t, err)
	}
}

// A request abandoned (its NodeTimeout passed) while queued is never sent,
// and the queue keeps moving.
func TestBatchAbandonedRequests(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var conns sync.WaitGroup
	accepted := make(chan net.Conn, 16)
	conns.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c // never answers
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		conns.Wait()
		close(accepted)
		for c := range accepted {
			_ = c.Close()
		}
	})
	cl := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), MaxRetries: -1, ReadTimeout: 300 * time.Millisecond, DialTimeout: time.Second})
	t.Cleanup(func() { _ = cl.Close() })
	n := newNode(cl, "silent", true)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			_, err := n.run(ctx, releaseCall("k", "v", "", "", "0"))
			assert.Error(t, err)
		})
	}
	wg.Wait()
	require.Eventually(t, func() bool {
		n.batch.mu.Lock()
		defer n.batch.mu.Unlock()
		return n.batch.inFlight == 0 && len(n.batch.queue) == 0
	}, 5*time.Second, 5*time.Millisecond, "the batch queue must drain")
}
