package observer

import (
	"context"
	"testing"
	"time"

	"github.com/redlease/redlease/internal/testing/locktest"
	"github.com/redlease/redlease/internal/testing/testnodes"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

func TestMain(m *testing.M) { testnodes.Main(m) }

func testLogger(t testing.TB) hclog.Logger { return testnodes.Logger(t, hclog.Debug) }

// newClient makes a bootstrapped redlock.Client over nodes, with a
// NodeTimeout far above a round trip (miniredis is slow under -race),
// closed on cleanup.
func newClient(t testing.TB, nodes []redis.UniversalClient, hooks ...func(redlock.Event)) *redlock.Client {
	t.Helper()
	cfg := redlock.Config{NodeTimeout: 500 * time.Millisecond, Logger: testLogger(t)}
	if len(hooks) > 0 {
		cfg.Hooks = hooks[0]
	}
	return locktest.New(t, cfg, nodes, true)
}

// hold acquires the lease of key as id; it is released on cleanup.
func hold(t testing.TB, c *redlock.Client, key, id string) *lease.Lease {
	t.Helper()
	l, err := lease.TryAcquire(context.Background(), c, key, lease.Config{ID: id, Metadata: map[string]string{"addr": id + ":80"}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Release(context.Background()) })
	return l
}

// next returns the next event of w, failing after a generous timeout.
// stateOf is what an event says: "leader", "no leader" or "unknown".
func stateOf(ev Event) string {
	switch {
	case ev.Err != nil:
		return "unknown"
	case ev.Leader.Value == "":
		return "no leader"
	}
	return "leader"
}

func next(t testing.TB, w <-chan Event) Event {
	t.Helper()
	select {
	case ev, ok := <-w:
		require.True(t, ok, "watch ended")
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
		return Event{}
	}
}

// ended waits for w's channel to close and returns the Err of its last
// event: why the watch ended, nil when ctx's end closed it.
func ended(t testing.TB, w <-chan Event) error {
	t.Helper()
	timeout := time.After(10 * time.Second)
	var last error
	for {
		select {
		case ev, ok := <-w:
			if !ok {
				return last
			}
			last = ev.Err
		case <-timeout:
			t.Fatal("watch did not end")
		}
	}
}
