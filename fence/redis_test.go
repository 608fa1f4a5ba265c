package fence_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/fence"
	"github.com/redlease/redlease/internal/testing/fencetest"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/internal/testing/testnodes"
)

// redisTargets are the servers the Redis guard is tested on: miniredis
// (its gopher-lua runs the same scripts), a real redis-server (or
// valkey-server: REDLEASE_REDIS_SERVER), and a real Redis Cluster.
var redisTargets = []struct {
	name   string
	client func(t *testing.T) redis.UniversalClient
}{
	{"miniredis", func(t *testing.T) redis.UniversalClient { _, cs := testnodes.Minis(t, 1); return cs[0] }},
	{"server", func(t *testing.T) redis.UniversalClient { return redistest.Start(t, 1).Server(0).Client(t) }},
	{"cluster", func(t *testing.T) redis.UniversalClient { return redistest.StartCluster(t, 3, 0).Client(t) }},
}

func TestRedisGuard(t *testing.T) {
	for _, target := range redisTargets {
		t.Run(target.name, func(t *testing.T) {
			c := target.client(t)
			g := fence.NewRedis(c)
			for _, key := range []string{"res", "{tag}.res", "res:with:colons"} {
				t.Run(key, func(t *testing.T) { redisGuardCase(t, c, g, key) })
			}
		})
	}
}

// redisGuardCase writes key through g with rising, equal and lower
// tokens; each refusal names both tokens and leaves the value.
func redisGuardCase(t *testing.T, c redis.UniversalClient, g *fence.Redis, key string) {
	ctx := context.Background()
	tk, err := fence.TokenKey(key)
	require.NoError(t, err)
	hash := key + ":h"
	for _, step := range []struct {
		token   uint64
		value   string
		highest uint64 // > 0: refused, naming it
	}{
		{token: 5, value: "a"},
		{token: 5, value: "b"}, // equal: the same term
		{token: 4, value: "c", highest: 5},
		{token: 9007199254740993, value: "d"}, // 2^53+1: above a float's exact range
		{token: 9007199254740992, value: "e", highest: 9007199254740993},
		{token: 18446744073709551615, value: "f"},
		{token: 18446744073709551614, value: "g", highest: 18446744073709551615},
	} {
		before, _ := c.Get(ctx, key).Result()
		err := g.Set(ctx, key, step.token, step.value, 0)
		_, herr := g.HSet(ctx, hash, step.token, "v", step.value)
		if step.highest == 0 {
			require.NoError(t, err, "token %d", step.token)
			require.NoError(t, herr, "token %d", step.token)
			assert.Equal(t, step.value, c.Get(ctx, key).Val())
			assert.Equal(t, step.value, c.HGet(ctx, hash, "v").Val())
			assert.Equal(t, strconv.FormatUint(step.token, 10), c.Get(ctx, tk).Val())
			continue
		}
		want := &fence.StaleTokenError{Resource: key, Token: step.token, Highest: step.highest}
		assert.Equal(t, want, err)
		assert.ErrorIs(t, herr, fence.ErrStaleToken)
		assert.Equal(t, before, c.Get(ctx, key).Val(), "a refused write leaves the value")
	}
	_, err = g.Del(ctx, key, 1)
	assert.ErrorIs(t, err, fence.ErrStaleToken)
	existed, err := g.Del(ctx, key, 18446744073709551615)
	require.NoError(t, err)
	assert.True(t, existed)
	assert.Equal(t, int64(0), c.Exists(ctx, key).Val())
	assert.Equal(t, "18446744073709551615", c.Get(ctx, tk).Val(), "the token key outlives the resource")
	require.NoError(t, g.Set(ctx, key, 18446744073709551615, "ttl", 50_000_000))
	assert.Positive(t, c.PTTL(ctx, key).Val())
}

// appendScript appends ARGV[1] to the list KEYS[1]: the user's own script
// behind the check.
var appendScript = fence.NewScript("return redis.call('RPUSH', KEYS[1], ARGV[1])")

func TestRedisUserScript(t *testing.T) {
	ctx := context.Background()
	_, cs := testnodes.Minis(t, 1)
	g := fence.NewRedis(cs[0])
	n, err := g.Run(ctx, appendScript, "list", 3, nil, "x").Int64()
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "the body's reply")
	err = g.Run(ctx, appendScript, "list", 2, nil, "y").Err()
	assert.Equal(t, &fence.StaleTokenError{Resource: "list", Token: 2, Highest: 3}, err)
	assert.Equal(t, []string{"x"}, cs[0].LRange(ctx, "list", 0, -1).Val())
	// A body that fails is the caller's error, not a refusal.
	err = g.Run(ctx, fence.NewScript("return redis.error_reply('MINE')"), "list", 3, nil).Err()
	require.Error(t, err)
	assert.NotErrorIs(t, err, fence.ErrStaleToken)
	assert.ErrorContains(t, err, "MINE")
}

func TestRedisBadInput(t *testing.T) {
	ctx := context.Background()
	_, cs := testnodes.Minis(t, 1)
	g := fence.NewRedis(cs[0])
	for _, tc := range []struct {
		name    string
		err     error
		is      error
		errPart string
	}{
		{"empty key", g.Set(ctx, "", 1, "v", 0), fence.ErrInvalidResource, "empty resource name"},
		{"zero token", g.Set(ctx, "k", 0, "v", 0), fence.ErrInvalidToken, `token 0 for resource "k"`},
		{"braces", g.Set(ctx, "a{}b", 1, "v", 0), fence.ErrInvalidResource, `"a{}b"`},
		{"negative ttl", g.Set(ctx, "k", 1, "v", -1), nil, "ttl -1ns"},
		{"sub-ms ttl", g.Set(ctx, "k", 1, "v", 10), nil, "ttl 10ns"},
		{"odd hset", second(g.HSet(ctx, "k", 1, "f")), nil, "1 arguments"},
		{"empty hset", second(g.HSet(ctx, "k", 1)), nil, "0 arguments"},
		{"del zero token", second(g.Del(ctx, "k", 0)), fence.ErrInvalidToken, "token 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Error(t, tc.err)
			if tc.is != nil {
				assert.ErrorIs(t, tc.err, tc.is)
			}
			assert.ErrorContains(t, tc.err, tc.errPart)
		})
	}
	assert.Equal(t, int64(0), cs[0].Exists(ctx, "k", "{k}:fence-token").Val(), "nothing written")
}

func second[T any](_ T, err error) error { return err }

// TestRedisConcurrent: writers with interleaved tokens (each token
// several times) append to a list and set a key through the guard; the
// list is never lower than an earlier entry, holds every accepted write,
// and the key ends with the highest token's value. The NEGATIVE CONTROL
// appends without the guard: the checker catches the log going down.
func TestRedisConcurrent(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t, 1).Server(0).Client(t)
	g := fence.NewRedis(c)
	tokens := fencetest.Interleaved(16, 4)
	accepted, err := fencetest.Write(tokens, 8, func(tok uint64) error {
		v := strconv.FormatUint(tok, 10)
		if err := g.Set(ctx, "value", tok, v, 0); err != nil && !errors.Is(err, fence.ErrStaleToken) {
			return err
		}
		return g.Run(ctx, appendScript, "log", tok, nil, v).Err()
	})
	require.NoError(t, err)
	require.NoError(t, fencetest.CheckRising(c.LRange(ctx, "log", 0, -1).Val(), accepted, 16, 4))
	assert.Equal(t, "16", c.Get(ctx, "value").Val(), "the highest token's write wins")

	for _, tok := range fencetest.Unguarded(tokens) { // NEGATIVE CONTROL: no guard
		require.NoError(t, c.RPush(ctx, "unguarded", tok).Err())
	}
	assert.Error(t, fencetest.CheckRising(c.LRange(ctx, "unguarded", 0, -1).Val(), len(tokens), 16, 4), "negative control")
}
