package redlock_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/redlock"
)

// Dial connects from addresses, with a password, and closes what it
// opened on Close.
func TestDial(t *testing.T) {
	ctx := context.Background()
	g := redistest.Start(t, 3, redistest.Options{Extra: []string{"requirepass pw"}})
	probe := redis.NewClient(&redis.Options{Addr: g.Server(0).Addr(), Password: "pw"})
	defer probe.Close()
	connected := func() int64 { // clients connected to server 0, the probe included
		info, err := probe.Info(ctx, "clients").Result()
		require.NoError(t, err)
		for _, l := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "connected_clients:"); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				require.NoError(t, err)
				return n
			}
		}
		return -1
	}
	addrs := g.Addrs()
	addrs[2] = "redis://" + addrs[2] + "/0" // a URL among host:port forms

	c, err := redlock.Dial(ctx, redlock.Config{NodeTimeout: nodeTimeout}, addrs,
		redlock.DialOptions{Password: "pw", DialTimeout: time.Second})
	require.NoError(t, err)
	require.NoError(t, c.Bootstrap(ctx))
	l, err := c.TryAcquire(ctx, "dial", 5*time.Second)
	require.NoError(t, err)
	err = l.Release(ctx)
	require.NoError(t, err)
	assert.Equal(t, g.Addrs()[:2], c.Internal().Nodes()[:2], "nodes are named by address")
	before := connected()
	require.NoError(t, c.Close())
	assert.Eventually(t, func() bool { return connected() < before }, waitFor, pollTick, "Close closes Dial's connections")

	_, err = redlock.Dial(ctx, redlock.Config{}, g.Addrs(), redlock.DialOptions{Password: "wrong"})
	require.ErrorIs(t, err, redlock.ErrAccessDenied)

	for _, bad := range [][]string{nil, {"no-port"}, {"redis://user:hunter2@[::1"}} {
		_, err := redlock.Dial(ctx, redlock.Config{}, bad, redlock.DialOptions{})
		require.ErrorIs(t, err, redlock.ErrInvalidArgument, "%q", bad)
		assert.NotContains(t, err.Error(), "hunter2", "no password in errors")
	}
}
