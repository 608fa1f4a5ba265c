package scripts

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/redistest"
)

// mode is a node's mode: FCALL (on) or EVALSHA.
func mode(on bool) *atomic.Bool {
	var b atomic.Bool
	b.Store(on)
	return &b
}

// acquireOn runs acquire on c (FCALL or EVALSHA) for key with value, and
// returns its vote (1 yes, 0 held, 2 or 3 quarantined).
func acquireOn(t *testing.T, c redis.UniversalClient, fcall bool, key, value string) int64 {
	t.Helper()
	res, err := NewCall(Acquire, []string{key, key + ":fence", "{redlease}:marker"}, value, "1000", "10000", "1", "100000", "0").
		Run(context.Background(), c, mode(fcall))
	require.NoError(t, err)
	return res.([]any)[0].(int64)
}

// The library loads once per version (a second load is no error), its
// functions answer as the EVAL scripts do, the first call records the
// copy's token in the marker, and a reloaded copy (DEBUG RELOAD) finds a
// token that is not its own and quarantines the node; EVALSHA's check,
// which compares run_id and replication ID only, lets it vote.
func TestLibraryToken(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, 1, redistest.Options{Extra: []string{"enable-debug-command local"}}).Server(0)
	c := srv.Client(t)
	require.NoError(t, LoadLibrary(ctx, c))
	require.NoError(t, LoadLibrary(ctx, c), "the same version again")

	// A marker dated long ago (bootstrapped), then the first FCALL.
	_, err := NewCall(Probe, []string{"{redlease}:marker"}, "10000", "1", "1", "", "nonce-1").Run(ctx, c, mode(true))
	require.NoError(t, err)
	tok, err := c.HGet(ctx, "{redlease}:marker", "t:"+Version).Result()
	require.NoError(t, err, "the probe recorded the copy's token")
	assert.Len(t, tok, 40)
	assert.EqualValues(t, 1, acquireOn(t, c, true, "a", "v1"))
	assert.EqualValues(t, 0, acquireOn(t, c, true, "a", "v2"), "held")

	require.NoError(t, c.Do(ctx, "DEBUG", "RELOAD").Err())
	assert.EqualValues(t, 0, acquireOn(t, c, false, "a", "v2"), "EVALSHA: still held, and voting (run_id and replication ID unchanged)")
	assert.EqualValues(t, 2, acquireOn(t, c, true, "b", "v3"), "FCALL: a new copy, quarantined")
	tok2, err := c.HGet(ctx, "{redlease}:marker", "t:"+Version).Result()
	require.NoError(t, err)
	assert.NotEqual(t, tok, tok2, "the new copy's token is recorded")
	assert.EqualValues(t, 2, acquireOn(t, c, true, "b", "v3"), "still in quarantine")
}

// With its token equal, the library still compares the replication ID (a
// promotion whose link broke before another master's marker arrived keeps
// the copy), by INFO replication, or, for a user allowed INFO server only,
// by INFO server and replication.
func TestLibraryReplicationID(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, 1).Server(0)
	admin := srv.Client(t)
	require.NoError(t, admin.ACLSetUser(ctx, "infoserver", "reset", "on", ">pw", "+@all", "-info", "+info|server", "~*").Err())
	user := redis.NewClient(&redis.Options{Addr: srv.Addr(), Username: "infoserver", Password: "pw"})
	t.Cleanup(func() { _ = user.Close() })
	require.Error(t, user.Info(ctx, "replication").Err(), "the user may not read INFO replication alone")
	require.NoError(t, LoadLibrary(ctx, admin))
	for _, c := range []*redis.Client{admin, user} {
		_, err := NewCall(Probe, []string{"{redlease}:marker"}, "10000", "1", "1", "", "nonce").Run(ctx, c, mode(true))
		require.NoError(t, err)
		require.NoError(t, admin.HGet(ctx, "{redlease}:marker", "t:"+Version).Err(), "the token is recorded")
		assert.EqualValues(t, 1, acquireOn(t, c, true, "a", "v1"), "token and replication ID agree")
		require.NoError(t, admin.HSet(ctx, "{redlease}:marker", "p", "another-replication-id").Err())
		assert.EqualValues(t, 2, acquireOn(t, c, true, "b", "v2"), "the replication ID differs: quarantined")
		require.NoError(t, admin.FlushAll(ctx).Err())
	}
}

// extend (and extend_many) compare the token too: where it is not the
// copy's, they vote as before (the node holds our value) but start the
// node's quarantine for the next acquisitions (docs/design.md §4.7.5);
// with the token check off (mode '3', a negative control) they record
// their token and the node votes at once.
func TestLibraryExtendGate(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t, 1).Server(0).Client(t)
	require.NoError(t, LoadLibrary(ctx, c))
	for _, tc := range []struct {
		mode string
		want int64 // the next acquisition's vote
	}{{"1", 2}, {"3", 1}} {
		require.NoError(t, c.FlushAll(ctx).Err())
		_, err := NewCall(Probe, []string{"{redlease}:marker"}, "10000", tc.mode, "1", "", "nonce").Run(ctx, c, mode(true))
		require.NoError(t, err)
		assert.EqualValues(t, 1, acquireOn(t, c, true, "a", "v1"))
		mine := c.HGet(ctx, "{redlease}:marker", "t:"+Version).Val()
		created := c.HGet(ctx, "{redlease}:marker", "c").Val()
		require.NoError(t, c.HSet(ctx, "{redlease}:marker", "t:"+Version, "another-copy").Err(), "as if the library was reloaded")

		res, err := NewCall(Extend, []string{"a", "{redlease}:marker"}, "v1", "1000", "10000", tc.mode).Run(ctx, c, mode(true))
		require.NoError(t, err)
		assert.EqualValues(t, 1, res, "mode %s: extend votes as before", tc.mode)
		assert.Equal(t, mine, c.HGet(ctx, "{redlease}:marker", "t:"+Version).Val(), "mode %s: our token recorded", tc.mode)
		res, err = NewCall(Acquire, []string{"b", "b:fence", "{redlease}:marker"}, "v2", "1000", "10000", tc.mode, "100000", "0").Run(ctx, c, mode(true))
		require.NoError(t, err)
		assert.EqualValues(t, tc.want, res.([]any)[0], "mode %s: the next acquisition", tc.mode)
		if tc.mode == "1" {
			assert.NotEqual(t, created, c.HGet(ctx, "{redlease}:marker", "c").Val(), "a new marker: a new quarantine")
		}
	}
}
