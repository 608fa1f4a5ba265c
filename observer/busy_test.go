package observer

import (
	"context"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/locktest"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/redlock"
)

// busyWatchFor is how long TestWatchBusyHostNoUnknown watches:
// REDLEASE_BUSY_WATCH (a Go duration; make busy-watch sets 2m, make test
// 45s).
func busyWatchFor(t *testing.T) time.Duration {
	v := os.Getenv("REDLEASE_BUSY_WATCH")
	d, err := time.ParseDuration(v)
	require.NoError(t, err, "REDLEASE_BUSY_WATCH=%q", v)
	return d
}

// TestWatchBusyHostNoUnknown (issue #32): three healthy redis-servers, the
// client's default NodeTimeout (50ms), two goroutines spinning on two
// cores (GOMAXPROCS 2) for 2 minutes: the watch reports the leader and
// never "unknown". Reads that miss NodeTimeout on every node happen on
// such a host; UnknownGrace reads them again. It keeps both cores busy for
// its whole duration, which would slow every test that runs beside it, so
// it runs only when REDLEASE_BUSY_WATCH is set: make test runs it after
// the timing tests, beside the fuzzers (target busy-watch).
func TestWatchBusyHostNoUnknown(t *testing.T) {
	if os.Getenv("REDLEASE_BUSY_WATCH") == "" {
		t.Skip("spins both cores for REDLEASE_BUSY_WATCH; make test runs it after the timing tests (make busy-watch)")
	}
	d := busyWatchFor(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	g := redistest.Start(t, 3)
	var nodes []redis.UniversalClient
	for _, c := range g.Clients(t) {
		nodes = append(nodes, c)
	}
	c := locktest.New(t, redlock.Config{Logger: testLogger(t)}, nodes, true)
	reads := &failOnce{key: "svc"}
	nodes[0].AddHook(reads)
	o, err := New(c, "svc", Config{PollInterval: 20 * time.Millisecond, Logger: testLogger(t)})
	require.NoError(t, err)
	hold(t, c, "svc", "a")

	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var spin sync.WaitGroup
	for range 2 {
		spin.Go(func() { busy(ctx) })
	}
	w := o.Watch(ctx)
	var events, unknown []Event
	for ev := range w {
		events = append(events, ev)
		if stateOf(ev) == "unknown" {
			unknown = append(unknown, ev)
		}
	}
	spin.Wait()
	t.Logf("%s: %d reads, %d failed on node 0, %d events, %d unknown", d, reads.calls.Load(), reads.errs.Load(), len(events), len(unknown))
	require.Empty(t, unknown, "no unknown with every node healthy")
	require.NotEmpty(t, events)
	require.Equal(t, "leader", stateOf(events[0]))
	require.Greater(t, reads.calls.Load(), int64(d/time.Second), "the watch kept reading")
}

// busy spins until ctx ends.
func busy(ctx context.Context) {
	var n atomic.Int64
	for ctx.Err() == nil {
		for range 1 << 16 {
			n.Add(1)
		}
	}
}
