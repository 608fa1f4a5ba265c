package security

import (
	"context"
	"testing"
	"time"

	"github.com/redlease/redlease/internal/testing/testnodes"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/redlock"
)

func TestMain(m *testing.M) { testnodes.Main(m) }

// skipShort skips tests that start real redis-server processes.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real redis-server processes")
	}
}

func newLogBuffer(t testing.TB) (*testnodes.LogBuffer, hclog.Logger) {
	lb := &testnodes.LogBuffer{T: t}
	return lb, hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Debug, Output: lb})
}

// bootstrap makes the servers of g vote at once, through the default
// (unrestricted) user, so that tests of restricted users do not wait out
// the quarantine of fresh nodes.
func bootstrap(t *testing.T, g *redistest.Group) {
	t.Helper()
	ctx := context.Background()
	var nodes []redis.UniversalClient
	for _, c := range g.Clients(t) {
		nodes = append(nodes, c)
	}
	c, err := redlock.New(ctx, redlock.Config{NodeTimeout: nodeTimeout}, nodes...)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Bootstrap(ctx))
}

// lockCycle acquires key on c, extends it, reads it back with Inspect and
// releases it: each call must succeed.
func lockCycle(t *testing.T, c *redlock.Client, key string) {
	t.Helper()
	ctx := context.Background()
	l, err := c.TryAcquire(ctx, key, 5*time.Second)
	require.NoError(t, err)
	require.NoError(t, l.Extend(ctx, 0))
	in, err := c.Inspect(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, l.Value(), in.Value)
	require.NoError(t, l.Release(ctx))
}

// testLogger sends a client's logs to t.Log.
func testLogger(t *testing.T) hclog.Logger {
	_, l := newLogBuffer(t)
	return l
}
