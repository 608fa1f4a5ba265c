package redlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/rediserr"
	"github.com/redlease/redlease/internal/testing/redistest"
)

// TestIntegrationServerReplies provokes each error reply it can on the real
// server under test (REDLEASE_REDIS_SERVER: Redis or Valkey) and checks
// its code and class, so that a server that rewords a reply, or changes
// its code, fails here rather than in a user's retry loop.
func TestIntegrationServerReplies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	ctx := context.Background()
	g := redistest.Start(t, 1, redistest.Options{Extra: []string{"busy-reply-threshold 20"}})
	master := g.Server(0)
	replica := redistest.StartReplica(t, master.Addr(), redistest.Options{Extra: []string{"replica-serve-stale-data no"}})
	client := func(addr, user string) *redis.Client {
		o := &redis.Options{Addr: addr, MaxRetries: -1}
		if user != "" {
			o.Username, o.Password = user, "pw"
		}
		c := redis.NewClient(o)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	admin := client(master.Addr(), "")
	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "app", "on", ">pw", "resetkeys", "~app:*", "resetchannels", "&app:*", "+@all", "-time").Err())
	app := client(master.Addr(), "app")
	require.NoError(t, admin.HSet(ctx, "app:hash", "f", "v").Err())

	check := func(t *testing.T, err error, code string, class rediserr.Class) {
		t.Helper()
		require.Error(t, err)
		re, ok := errors.AsType[*rediserr.ReplyError](classify(err))
		require.True(t, ok, "a server reply: %v", err)
		assert.Equal(t, code, re.Code, "reply %q", err)
		assert.Equal(t, class, re.Class, "reply %q: class %v, want %v", err, re.Class, class)
	}
	for _, tc := range []struct {
		name  string
		call  func() error
		code  string
		class rediserr.Class
	}{
		{"command refused", func() error { return app.Time(ctx).Err() }, "NOPERM", rediserr.Permission},
		{"key refused", func() error { return app.Get(ctx, "other:k").Err() }, "NOPERM", rediserr.Permission},
		{"channel refused", func() error { return app.Publish(ctx, "other:ch", "m").Err() }, "NOPERM", rediserr.Permission},
		{"command refused in a script", func() error {
			return app.Eval(ctx, "return redis.call('TIME')", nil).Err()
		}, "ERR", rediserr.Permission},
		{"key refused in a script", func() error {
			return app.Eval(ctx, "return redis.call('GET', 'other:k')", nil).Err()
		}, "ERR", rediserr.Permission},
		{"wrong type", func() error { return admin.Get(ctx, "app:hash").Err() }, "WRONGTYPE", rediserr.WrongType},
		{"wrong type in a script", func() error {
			return admin.Eval(ctx, "return redis.call('GET', KEYS[1])", []string{"app:hash"}).Err()
		}, "WRONGTYPE", rediserr.WrongType},
		{"unknown command", func() error { return admin.Do(ctx, "FROB").Err() }, "ERR", rediserr.Unsupported},
		{"unknown subcommand", func() error { return admin.Do(ctx, "CONFIG", "FROB").Err() }, "ERR", rediserr.Unsupported},
		{"unknown command in a script", func() error {
			return admin.Eval(ctx, "return redis.call('FROB')", nil).Err()
		}, "ERR", rediserr.Unsupported},
		{"no script", func() error {
			return admin.EvalSha(ctx, strings.Repeat("0", 40), nil).Err()
		}, "NOSCRIPT", rediserr.NoScript},
		{"redlease refuses", func() error {
			// A TTL of 1s on a node whose MaxTTL is 10ms.
			return scriptExtend.Run(ctx, admin, []string{"app:lock", "app:marker"}, "v", 1000, 10, "1").Err()
		}, rediserr.ScriptCode, rediserr.Script},
		{"script does not compile", func() error { return admin.Eval(ctx, "return 1 +", nil).Err() }, "ERR", rediserr.Script},
		{"script raises", func() error { return admin.Eval(ctx, "error('boom')", nil).Err() }, "ERR", rediserr.Script},
		{"wrong password", func() error { return admin.Do(ctx, "AUTH", "app", "wrong").Err() }, "WRONGPASS", rediserr.Auth},
		{"read-only replica", func() error {
			return client(replica.Addr(), "").Set(ctx, "app:k", "v", 0).Err()
		}, "READONLY", rediserr.Transient},
	} {
		t.Run(tc.name, func(t *testing.T) { check(t, tc.call(), tc.code, tc.class) })
	}

	t.Run("out of memory", func(t *testing.T) {
		require.NoError(t, admin.ConfigSet(ctx, "maxmemory", "1").Err())
		err := admin.Set(ctx, "app:k", "v", 0).Err()
		require.NoError(t, admin.ConfigSet(ctx, "maxmemory", "0").Err())
		check(t, err, "OOM", rediserr.Transient)
	})

	t.Run("busy", func(t *testing.T) {
		// A script that runs until SCRIPT KILL; past busy-reply-threshold
		// (20ms) other clients are answered BUSY.
		done := make(chan error, 1)
		go func() { done <- client(master.Addr(), "").Eval(ctx, "while true do end", nil).Err() }()
		other := client(master.Addr(), "")
		var err error
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			if err = other.Ping(ctx).Err(); err != nil {
				break
			}
			// The script has not started yet: PING was answered.
		}
		check(t, err, "BUSY", rediserr.Transient)
		require.NoError(t, other.ScriptKill(ctx).Err())
		require.Error(t, <-done, "the killed script fails")
	})

	t.Run("master down", func(t *testing.T) {
		// replica-serve-stale-data no: once its master is gone, the
		// replica answers MASTERDOWN.
		require.NoError(t, master.Stop())
		rc := client(replica.Addr(), "")
		var err error
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); <-tick.C {
			if err = rc.Get(ctx, "app:k").Err(); err != nil && !errors.Is(err, redis.Nil) {
				break
			}
		}
		check(t, err, "MASTERDOWN", rediserr.Transient)
	})
}
