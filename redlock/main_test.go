package redlock

import (
	"context"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// go-redis redials a dead server from a goroutine of its own that sleeps
// up to a second before it notices its pool was closed: not ours to wait for.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"))
}

// minis starts n miniredis servers and returns them with a go-redis client
// each; everything is closed on cleanup.
func minis(t testing.TB, n int) ([]*miniredis.Miniredis, []redis.UniversalClient) {
	t.Helper()
	var ms []*miniredis.Miniredis
	var cs []redis.UniversalClient
	for range n {
		m := miniredis.RunT(t)
		c := redis.NewClient(&redis.Options{Addr: m.Addr()})
		t.Cleanup(func() { _ = c.Close() })
		ms = append(ms, m)
		cs = append(cs, c)
	}
	return ms, cs
}

// testLogger sends a client's logs to t.Log.
func testLogger(t testing.TB) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Debug, Output: tWriter{t}})
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// newClient makes a bootstrapped Client over nodes, closed on cleanup.
func newClient(t testing.TB, cfg Config, nodes []redis.UniversalClient) *Client {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	c, err := New(context.Background(), cfg, nodes...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.Bootstrap(context.Background()))
	return c
}
