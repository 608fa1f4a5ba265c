package redlock

import (
	"context"
	"testing"
	"time"

	"github.com/redlease/redlease/internal/testing/testnodes"

	"github.com/alicebob/miniredis/v2"
	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { testnodes.Main(m) }

// testLogger sends a client's logs to t.Log.
func testLogger(t testing.TB) hclog.Logger { return testnodes.Logger(t, hclog.Debug) }

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

// unitNodes starts n miniredis nodes and a bootstrapped client over them
// with unitCfg.
func unitNodes(t testing.TB, n int) ([]*miniredis.Miniredis, *Client) {
	t.Helper()
	ms, nodes := testnodes.Minis(t, n)
	return ms, newClient(t, unitCfg, nodes)
}

// acquired takes key on c for ttl and waits until every node of ms holds
// it: TryAcquire returns at a majority, and the other nodes' SETs may land
// a moment later.
func acquired(t testing.TB, c *Client, ms []*miniredis.Miniredis, key string, ttl time.Duration) *Lock {
	t.Helper()
	l, err := c.TryAcquire(context.Background(), key, ttl)
	require.NoError(t, err)
	testnodes.WaitValue(t, ms, key, l.Value())
	return l
}
