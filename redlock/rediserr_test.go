package redlock

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/testnodes"
)

// TestNewRefusesServerWithoutLua: a node that does not know EVALSHA (a
// server without Lua scripting) is refused by New with an error naming it,
// rather than accepted as a node that never votes.
func TestNewRefusesServerWithoutLua(t *testing.T) {
	ctx := context.Background()
	_, good := testnodes.Minis(t, 2)
	addr := fakeServer(t, "-ERR unknown command 'evalsha', with args beginning with: \r\n")
	noLua := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { _ = noLua.Close() })
	_, err := New(ctx, Config{NodeTimeout: time.Second, Logger: testLogger(t)}, good[0], good[1], noLua)
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.ErrorContains(t, err, addr)
	assert.ErrorContains(t, err, "Lua")
}
