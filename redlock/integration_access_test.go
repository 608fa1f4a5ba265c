package redlock_test

// Errors that end, on real redis-servers: refused credentials and
// permissions (New refuses them; Acquire returns them at once), a
// cancelled context at New, a key above the size limit, and a nil *Lock.

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/backoff"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/redlock"
)

// userNodes creates user with rules on every server of g and returns a
// client per server that logs in as user with password.
func userNodes(t *testing.T, g *redistest.Group, user, password string, rules ...string) []redis.UniversalClient {
	t.Helper()
	var nodes []redis.UniversalClient
	for _, s := range g.Servers() {
		args := append([]string{"reset", "on", ">right-password"}, rules...)
		require.NoError(t, s.Client(t).ACLSetUser(context.Background(), user, args...).Err())
		c := redis.NewClient(&redis.Options{Addr: s.Addr(), Username: user, Password: password})
		t.Cleanup(func() { _ = c.Close() })
		nodes = append(nodes, c)
	}
	return nodes
}

func TestAccessDeniedIsFinal(t *testing.T) {
	ctx := context.Background()
	g := redistest.Start(t, 3)
	cfg := redlock.Config{NodeTimeout: nodeTimeout}

	t.Run("New refuses a wrong password", func(t *testing.T) {
		nodes := userNodes(t, g, "wrongpass", "not-the-password", "+@all", "~*", "&*")
		c, err := redlock.New(ctx, cfg, nodes...)
		require.ErrorIs(t, err, redlock.ErrAccessDenied)
		assert.Nil(t, c)
		assert.Contains(t, err.Error(), "WRONGPASS")
		assert.Contains(t, err.Error(), g.Server(0).Addr(), "the error names the node")
	})

	t.Run("New refuses no password where one is required", func(t *testing.T) {
		s := redistest.Start(t, 1).Server(0)
		require.NoError(t, s.Client(t).ConfigSet(ctx, "requirepass", "pw").Err())
		anon := redis.NewClient(&redis.Options{Addr: s.Addr()})
		defer anon.Close()
		_, err := redlock.New(ctx, cfg, anon)
		require.ErrorIs(t, err, redlock.ErrAccessDenied)
		assert.Contains(t, err.Error(), "NOAUTH")
	})

	t.Run("New refuses an ACL without a permission the scripts need", func(t *testing.T) {
		nodes := userNodes(t, g, "noevalsha", "right-password", "+@all", "-evalsha", "-function", "~*", "&*")
		_, err := redlock.New(ctx, cfg, nodes...)
		require.ErrorIs(t, err, redlock.ErrAccessDenied)
		assert.Contains(t, err.Error(), "NOPERM")
		assert.Contains(t, err.Error(), "evalsha")
	})

	fallsBackWithoutFunctionRights(t, g, cfg)

	t.Run("Acquire returns a refusal after start-up at once", func(t *testing.T) {
		nodes := userNodes(t, g, "later", "right-password", "+@all", "~*", "&*")
		c, err := redlock.New(ctx, cfg, nodes...)
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.Bootstrap(ctx))
		// An operator changes the password under the running client: new
		// connections are refused.
		for _, s := range g.Servers() {
			require.NoError(t, s.Client(t).ACLSetUser(ctx, "later", "resetpass", ">changed").Err())
			require.NoError(t, s.Client(t).Do(ctx, "client", "kill", "user", "later").Err())
		}
		actx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		_, err = c.Acquire(actx, "access/a", 5*time.Second)
		require.ErrorIs(t, err, redlock.ErrAccessDenied)
		require.ErrorIs(t, err, redlock.ErrNotAcquired)
		assert.NoError(t, actx.Err(), "Acquire returned without waiting for its context: %v", err)
		var qe *redlock.QuorumError
		require.ErrorAs(t, err, &qe, "a *QuorumError is in the chain")
		assert.Equal(t, "acquire", qe.Op)
		assert.Contains(t, err.Error(), "WRONGPASS")
	})
}

// fallsBackWithoutFunctionRights: without FUNCTION (or FCALL) rights, a
// node of g runs the EVALSHA scripts.
func fallsBackWithoutFunctionRights(t *testing.T, g *redistest.Group, cfg redlock.Config) {
	ctx := context.Background()
	for _, deny := range []string{"-function", "-fcall"} {
		t.Run("an ACL with "+deny+" falls back to EVALSHA", func(t *testing.T) {
			nodes := userNodes(t, g, "no"+deny[1:], "right-password", "+@all", deny, "~*", "&*")
			c, err := redlock.New(ctx, cfg, nodes...)
			require.NoError(t, err)
			defer c.Close()
			require.NoError(t, c.Bootstrap(ctx))
			for _, n := range c.Internal().Heard() {
				assert.False(t, n.Function, "the node runs EVALSHA")
			}
			l, err := c.TryAcquire(ctx, "access/"+deny, 5*time.Second)
			require.NoError(t, err)
			require.NoError(t, l.Release(ctx))
		})
	}

}

func TestNewHonoursCancelledContext(t *testing.T) {
	g := redistest.Start(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, err := redlock.New(ctx, redlock.Config{}, g.Clients(t)[0])
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, c)
	// A marker would mean New went on and touched the node.
	n, err := g.Server(0).Client(t).Exists(context.Background(), markerKey).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "New contacted the node after its context ended")
}

func TestKeySizeLimit(t *testing.T) {
	ctx := context.Background()
	c := startServers(t, serversConfig{n: 3}).locker(t, redlock.Config{NodeTimeout: nodeTimeout})

	l, err := c.TryAcquire(ctx, strings.Repeat("k", 4096), 5*time.Second)
	require.NoError(t, err, "4096 bytes is the limit, included")
	err = l.Release(ctx)
	require.NoError(t, err)

	huge := strings.Repeat("x", 64<<20) // 64 MiB
	for name, call := range map[string]func() error{
		"Acquire": func() error { _, err := c.Acquire(ctx, huge, 5*time.Second); return err },
		"Inspect": func() error { _, err := c.Inspect(ctx, huge); return err },
	} {
		err := call()
		require.ErrorIs(t, err, redlock.ErrInvalidArgument, name)
		assert.Less(t, len(err.Error()), 300, "%s: the error quotes a truncated key: %.300s", name, err)
		assert.Contains(t, err.Error(), `"xxxxxxxx`, name)
		assert.Contains(t, err.Error(), "67108864 bytes, above the limit of 4096", name)
	}
}

func TestNilLockIsNotHeld(t *testing.T) {
	ctx := context.Background()
	c := startServers(t, serversConfig{n: 3}).locker(t, redlock.Config{NodeTimeout: nodeTimeout})
	holder, err := c.TryAcquire(ctx, "nil-lock", 5*time.Second)
	require.NoError(t, err)
	defer holder.Release(ctx)

	lock, err := c.TryAcquire(ctx, "nil-lock", 5*time.Second)
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	require.Nil(t, lock)
	// What the README's loop does after a failed acquire: no panic.
	assert.False(t, lock.Held())
	assert.Zero(t, lock.Token())
	assert.Zero(t, lock.Remaining())
	assert.ErrorIs(t, lock.Extend(ctx, 0), redlock.ErrNotHeld)
	err = lock.Release(ctx)
	assert.ErrorIs(t, err, redlock.ErrNotHeld)
}

// Acquire's default retries back off: waiting on a held key for the same
// time, it sends fewer requests than with a constant jittered delay.
func TestAcquireBacksOff(t *testing.T) {
	ctx := context.Background()
	it := startServers(t, serversConfig{n: 1})
	const delay = 10 * time.Millisecond
	c := it.locker(t, redlock.Config{NodeTimeout: nodeTimeout, RetryDelay: delay})
	holder, err := c.TryAcquire(ctx, "backoff", 20*time.Second)
	require.NoError(t, err)
	defer holder.Release(ctx)

	calls := func(opts ...redlock.AcquireOption) int64 {
		srv := it.Direct[0]
		require.NoError(t, srv.ConfigResetStat(ctx).Err())
		actx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err := c.Acquire(actx, "backoff", 5*time.Second, opts...)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		stats, err := srv.Info(ctx, "commandstats").Result()
		require.NoError(t, err)
		return scriptCallsIn(t, stats)
	}
	exp := calls()
	constant := calls(redlock.WithRetry(func(int) (time.Duration, bool) { return backoff.Jitter(delay), true }))
	t.Logf("script calls (EVALSHA, FCALL) in 1s: %d with the default backoff, %d with a constant jittered %s", exp, constant, delay)
	assert.Less(t, exp, constant, "the default strategy backs off")
}

// scriptCallsIn reads the script calls, EVALSHA and FCALL, from INFO
// commandstats.
func scriptCallsIn(t *testing.T, stats string) int64 {
	var n int64
	found := false
	for _, line := range strings.Split(stats, "\n") {
		for _, cmd := range []string{"evalsha", "fcall"} {
			rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":calls=")
			if ok {
				c, err := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
				require.NoError(t, err)
				n, found = n+c, true
			}
		}
	}
	if !found {
		t.Fatalf("no cmdstat_evalsha nor cmdstat_fcall in %q", stats)
	}
	return n
}
