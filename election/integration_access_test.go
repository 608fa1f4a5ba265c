package election

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// A password changed under a running candidate ends Run at once with an
// error matching redlock.ErrAccessDenied, instead of a campaign retried
// until ctx ends.
func TestRunEndsOnAccessDenied(t *testing.T) {
	ctx := context.Background()
	g := redistest.Start(t, 3)
	var nodes []redis.UniversalClient
	for _, s := range g.Servers() {
		require.NoError(t, s.Client(t).ACLSetUser(ctx, "cand", "reset", "on", ">pw", "+@all", "~*", "&*").Err())
		c := redis.NewClient(&redis.Options{Addr: s.Addr(), Username: "cand", Password: "pw", MaxRetries: -1})
		t.Cleanup(func() { _ = c.Close() })
		nodes = append(nodes, c)
	}
	client, err := redlock.New(ctx, redlock.Config{NodeTimeout: 250 * time.Millisecond, Logger: testLogger(t)}, nodes...)
	require.NoError(t, err)
	defer client.Close()
	require.NoError(t, client.Bootstrap(ctx))
	for _, s := range g.Servers() {
		admin := s.Client(t)
		require.NoError(t, admin.ACLSetUser(ctx, "cand", "resetpass", ">changed").Err())
		require.NoError(t, admin.Do(ctx, "client", "kill", "user", "cand").Err())
	}
	e, err := New(client, "access/leader", Config{Lease: lease.Config{TTL: 2 * time.Second, Logger: testLogger(t)}})
	require.NoError(t, err)
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = e.Run(rctx)
	require.ErrorIs(t, err, redlock.ErrAccessDenied)
	assert.NoError(t, rctx.Err(), "Run returned on its own, not at its context's end: %v", err)
	assert.Contains(t, err.Error(), "WRONGPASS")
	// An Elector campaigns once: a second Run says so at once.
	assert.ErrorIs(t, e.Run(rctx), redlock.ErrInvalidArgument, "Run called twice")
}
