package election

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/observer"
	"github.com/redlease/redlease/redlock"
)

// silentNodeTimeout is the NodeTimeout of TestSilentNodeDelaysNothing:
// above a local round trip under -race on a loaded machine, so that the
// healthy nodes always answer in time (as healthClient's).
const silentNodeTimeout = 200 * time.Millisecond

// silentSlack is what a silent node may add beyond NodeTimeout to each
// step measured: the few ms of the step itself on an idle machine, and
// room for a loaded 2-core machine running the race detector, where a
// goroutine may wait tens of ms for a core. Without the fix a step waits
// for go-redis's socket timeouts (seconds), far above it.
const silentSlack = 250 * time.Millisecond

// TestSilentNodeDelaysNothing: with three real servers, one of which
// accepts connections but never answers (a SIGSTOPped server, or a
// listener that takes the connection and sends nothing back), and the
// go-redis clients' default socket timeouts (3s reads, 5s dials) as a
// user of redlock.Dial has them, the silent node delays neither the first
// campaign's election, nor a Watch's first event, nor Run's return after
// its context ends, by more than NodeTimeout (issue #32, item 3). The
// change-notice subscriptions are made concurrently and their Close does
// not wait for the silent node's connection set-up.
func TestSilentNodeDelaysNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("real redis-servers: not in -short")
	}
	for _, kind := range []string{"sigstop", "accept-only"} {
		t.Run(kind, func(t *testing.T) {
			rig := redistest.StartRig(t, 3, redistest.RigOptions{
				Proxied: 1,
				Node: func(_ int, addr string) *redis.Options {
					return &redis.Options{Addr: addr, Protocol: 2} // go-redis's socket defaults
				},
			})
			c := newClient(t, redlock.Config{NodeTimeout: silentNodeTimeout}, rig.Nodes)
			// Cleanups run last first: the node speaks again before the
			// client's Close waits for the requests stuck on it.
			t.Cleanup(func() {
				rig.Heal()
				rig.Proxies[0].ResetAll()
			})
			switch kind {
			case "sigstop":
				require.NoError(t, rig.Server(0).Pause())
			case "accept-only":
				rig.Proxies[0].Partition() // accepts, never answers
				rig.Proxies[0].ResetAll()  // no pooled connection answers either
			}
			measureSilent(t, c)
		})
	}
}

// measureSilent measures, on c (one node silent), the time to the first
// campaign's election, to a Watch's first event, and for Run to return
// after its context ends, and checks each against NodeTimeout + slack.
func measureSilent(t *testing.T, c *redlock.Client) {
	const name = "silent/election"
	bound := silentNodeTimeout + silentSlack
	elected := make(chan struct{})
	cfg := unitCfg(t, "first")
	cfg.OnElected = func(ctx context.Context, _ Term) {
		close(elected)
		<-ctx.Done()
	}
	e := newElector(t, c, name, cfg)
	t0 := time.Now()
	r := start(t, e)
	select {
	case <-elected:
	case <-time.After(30 * time.Second):
		t.Fatal("not elected within 30s")
	}
	toElected := time.Since(t0)

	obs, err := observer.New(c, name, observer.Config{})
	require.NoError(t, err)
	wctx, stopWatch := context.WithCancel(context.Background())
	t0 = time.Now()
	w := obs.Watch(wctx)
	ev, ok := <-w
	toEvent := time.Since(t0)
	require.True(t, ok, "the watch ended")
	assert.NotEmpty(t, ev.Leader.Value, "first event: %s", ev)
	assert.NoError(t, ev.Err, "first event: %s", ev)
	stopWatch()
	for range w {
	}

	t0 = time.Now()
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s of its context's end")
	}
	toReturn := time.Since(t0)
	require.ErrorIs(t, r.err, context.Canceled)

	t.Logf("elected after %s, first Watch event after %s, Run returned %s after cancel (bound %s)",
		toElected, toEvent, toReturn, bound)
	assert.Less(t, toElected, bound, "time to the first campaign's election")
	assert.Less(t, toEvent, bound, "time to the Watch's first event")
	assert.Less(t, toReturn, bound, "time for Run to return after cancel")
}
