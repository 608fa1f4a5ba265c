package election

import (
	"context"
	"sync"
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

// testLogger sends logs to t.Log.
func testLogger(t testing.TB) hclog.Logger { return testnodes.Logger(t, hclog.Debug) }

// unitClientCfg: a NodeTimeout far above a round trip, since miniredis
// runs Lua slowly under -race.
var unitClientCfg = redlock.Config{NodeTimeout: 500 * time.Millisecond}

// newClient makes a bootstrapped redlock.Client over nodes, closed on
// cleanup.
func newClient(t testing.TB, cfg redlock.Config, nodes []redis.UniversalClient) *redlock.Client {
	t.Helper()
	return locktest.New(t, cfg, nodes, true)
}

// unitCfg is a Config for unit tests: short waits, logs to t.Log.
func unitCfg(t testing.TB, id string) Config {
	return Config{Lease: lease.Config{ID: id, TTL: 3 * time.Second, RetryDelay: 20 * time.Millisecond, Logger: testLogger(t)}}
}

// running is an Elector whose Run runs in a goroutine until stop.
type running struct {
	*Elector
	cancel context.CancelFunc
	done   chan struct{}
	err    error // Run's result, once done is closed
}

// start runs e in a goroutine; it is stopped on cleanup.
func start(t testing.TB, e *Elector) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Elector: e, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = e.Run(ctx)
	}()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop cancels Run and waits for it to return.
func (r *running) stop(t testing.TB) error {
	t.Helper()
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("Run of %s did not return", r.cfg.Lease.ID)
	}
	return r.err
}

// newElector makes an Elector, failing the test on error.
func newElector(t testing.TB, c *redlock.Client, name string, cfg Config) *Elector {
	t.Helper()
	e, err := New(c, name, cfg)
	require.NoError(t, err)
	return e
}

// waitEvent returns the first event of e's channel matching ok, failing
// the test after timeout. Events that do not match are passed to skip.
func waitEvent(t testing.TB, ch <-chan Event, timeout time.Duration, ok func(Event) bool) Event {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case ev, open := <-ch:
			if !open {
				t.Fatalf("events closed while waiting")
			}
			if ok(ev) {
				return ev
			}
		case <-timer.C:
			t.Fatalf("no matching event within %s", timeout)
		}
	}
}

func kind(k redlock.EventKind) func(Event) bool {
	return func(ev Event) bool { return ev.Kind == k }
}

// recorder records what callbacks saw, in order, from any goroutine.
type recorder struct {
	mu  sync.Mutex
	log []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, s)
}

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.log...)
}

// within waits until cond holds, polling, failing after timeout. For
// states with no event to wait on (a callback's side effect).
func within(t testing.TB, timeout time.Duration, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, timeout, time.Millisecond, msg)
}
