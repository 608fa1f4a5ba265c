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
	"github.com/redlease/redlease/internal/scripts"
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
	e := startReplyServers(t)
	for _, tc := range serverReplyCases {
		t.Run(tc.name, func(t *testing.T) { checkReply(t, tc.call(e), tc.code, tc.class) })
	}
	t.Run("out of memory", e.outOfMemory)
	t.Run("busy", e.busy)
	t.Run("master down", e.masterDown)
}

// replyServers are TestIntegrationServerReplies' master and replica, and
// its clients of the master: admin, and app, whose ACL user has keys and
// channels app:* and every command but TIME.
type replyServers struct {
	t               *testing.T // the test, whose cleanup closes the clients
	master, replica *redistest.Server
	admin, app      *redis.Client
}

func startReplyServers(t *testing.T) *replyServers {
	ctx := context.Background()
	g := redistest.Start(t, 1, redistest.Options{Extra: []string{"busy-reply-threshold 20"}})
	e := &replyServers{t: t, master: g.Server(0)}
	e.replica = redistest.StartReplica(t, e.master.Addr(), redistest.Options{Extra: []string{"replica-serve-stale-data no"}})
	e.admin = e.client(e.master.Addr(), "")
	require.NoError(t, e.admin.Do(ctx, "ACL", "SETUSER", "app", "on", ">pw", "resetkeys", "~app:*", "resetchannels", "&app:*", "+@all", "-time").Err())
	e.app = e.client(e.master.Addr(), "app")
	require.NoError(t, e.admin.HSet(ctx, "app:hash", "f", "v").Err())
	return e
}

// client is a client of addr as user (password pw), or as the default
// user if user is empty, with no retries.
func (e *replyServers) client(addr, user string) *redis.Client {
	o := &redis.Options{Addr: addr, MaxRetries: -1}
	if user != "" {
		o.Username, o.Password = user, "pw"
	}
	c := redis.NewClient(o)
	e.t.Cleanup(func() { _ = c.Close() })
	return c
}

// checkReply checks that err is a server reply of this code and class.
func checkReply(t *testing.T, err error, code string, class rediserr.Class) {
	t.Helper()
	require.Error(t, err)
	re, ok := errors.AsType[*rediserr.ReplyError](classify(err))
	require.True(t, ok, "a server reply: %v", err)
	assert.Equal(t, code, re.Code, "reply %q", err)
	assert.Equal(t, class, re.Class, "reply %q: class %v, want %v", err, re.Class, class)
}

// appEval and adminEval are cases' calls: script run by the app user or
// by the admin.
func appEval(script string, keys ...string) func(e *replyServers) error {
	return func(e *replyServers) error { return e.app.Eval(context.Background(), script, keys).Err() }
}

func adminEval(script string, keys ...string) func(e *replyServers) error {
	return func(e *replyServers) error { return e.admin.Eval(context.Background(), script, keys).Err() }
}

// serverReplyCases are the replies one call provokes.
var serverReplyCases = []struct {
	name  string
	call  func(e *replyServers) error
	code  string
	class rediserr.Class
}{
	{"command refused", func(e *replyServers) error { return e.app.Time(context.Background()).Err() }, "NOPERM", rediserr.Permission},
	{"key refused", func(e *replyServers) error { return e.app.Get(context.Background(), "other:k").Err() }, "NOPERM", rediserr.Permission},
	{"channel refused", func(e *replyServers) error {
		return e.app.Publish(context.Background(), "other:ch", "m").Err()
	}, "NOPERM", rediserr.Permission},
	{"command refused in a script", appEval("return redis.call('TIME')"), "ERR", rediserr.Permission},
	{"key refused in a script", appEval("return redis.call('GET', 'other:k')"), "ERR", rediserr.Permission},
	{"wrong type", func(e *replyServers) error { return e.admin.Get(context.Background(), "app:hash").Err() }, "WRONGTYPE", rediserr.WrongType},
	{"wrong type in a script", adminEval("return redis.call('GET', KEYS[1])", "app:hash"), "WRONGTYPE", rediserr.WrongType},
	{"unknown command", func(e *replyServers) error { return e.admin.Do(context.Background(), "FROB").Err() }, "ERR", rediserr.Unsupported},
	{"unknown subcommand", func(e *replyServers) error {
		return e.admin.Do(context.Background(), "CONFIG", "FROB").Err()
	}, "ERR", rediserr.Unsupported},
	{"unknown command in a script", adminEval("return redis.call('FROB')"), "ERR", rediserr.Unsupported},
	{"no script", func(e *replyServers) error {
		return e.admin.EvalSha(context.Background(), strings.Repeat("0", 40), nil).Err()
	}, "NOSCRIPT", rediserr.NoScript},
	{"redlease refuses", func(e *replyServers) error {
		// A TTL of 1s on a node whose MaxTTL is 10ms.
		return scripts.Extend.Run(context.Background(), e.admin, []string{"app:lock", "app:marker"}, "v", 1000, 10, "1").Err()
	}, rediserr.ScriptCode, rediserr.Script},
	{"script does not compile", adminEval("return 1 +"), "ERR", rediserr.Script},
	{"script raises", adminEval("error('boom')"), "ERR", rediserr.Script},
	{"wrong password", func(e *replyServers) error {
		return e.admin.Do(context.Background(), "AUTH", "app", "wrong").Err()
	}, "WRONGPASS", rediserr.Auth},
	{"read-only replica", func(e *replyServers) error {
		return e.client(e.replica.Addr(), "").Set(context.Background(), "app:k", "v", 0).Err()
	}, "READONLY", rediserr.Transient},
}

func (e *replyServers) outOfMemory(t *testing.T) {
	ctx := context.Background()
	require.NoError(t, e.admin.ConfigSet(ctx, "maxmemory", "1").Err())
	err := e.admin.Set(ctx, "app:k", "v", 0).Err()
	require.NoError(t, e.admin.ConfigSet(ctx, "maxmemory", "0").Err())
	checkReply(t, err, "OOM", rediserr.Transient)
}

func (e *replyServers) busy(t *testing.T) {
	ctx := context.Background()
	// A script that runs until SCRIPT KILL; past busy-reply-threshold
	// (20ms) other clients are answered BUSY.
	done := make(chan error, 1)
	go func() { done <- e.client(e.master.Addr(), "").Eval(ctx, "while true do end", nil).Err() }()
	other := e.client(e.master.Addr(), "")
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if err = other.Ping(ctx).Err(); err != nil {
			break
		}
		// The script has not started yet: PING was answered.
	}
	checkReply(t, err, "BUSY", rediserr.Transient)
	require.NoError(t, other.ScriptKill(ctx).Err())
	require.Error(t, <-done, "the killed script fails")
}

func (e *replyServers) masterDown(t *testing.T) {
	ctx := context.Background()
	// replica-serve-stale-data no: once its master is gone, the
	// replica answers MASTERDOWN.
	require.NoError(t, e.master.Stop())
	rc := e.client(e.replica.Addr(), "")
	var err error
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); <-tick.C {
		if err = rc.Get(ctx, "app:k").Err(); err != nil && !errors.Is(err, redis.Nil) {
			break
		}
	}
	checkReply(t, err, "MASTERDOWN", rediserr.Transient)
}
