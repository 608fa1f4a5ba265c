package security

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/internal/redlockx"
	"github.com/redlease/redlease/internal/scripts"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// aclRule is the least-privilege ACL rule of SECURITY.md for an
// application whose lock keys start with "app:", on standalone servers:
//
//	ACL SETUSER redlease reset on >PASSWORD <aclRule>
//
// Commands: EVALSHA and EVAL run the scripts (go-redis' Script.Run sends
// EVALSHA, then EVAL on NOSCRIPT; redlock's batches do the same in a
// pipeline), SCRIPT LOAD preloads them at New and Bootstrap; the commands
// the scripts call (Redis 7 checks each against the calling user); PUBLISH
// and SUBSCRIBE carry change notices; PING is go-redis' health check of an
// idle subscription. HELLO and AUTH need no permission; CONFIG GET (the
// maxmemory-policy check of New), CLIENT SETINFO and CLIENT
// MAINT_NOTIFICATIONS are optional: refused, they are skipped.
const aclRule = "+evalsha +eval +script|load +get +mget +set +incr +pexpire +pexpireat +pttl +del +hget +hmget +hset +time +info|server " +
	"+publish +subscribe +ping ~app:* ~{redlease}:marker &app:*:notice"

// aclRuleFunctions is aclRule with the rights of the Function library
// (docs/design.md §4.7.5): FUNCTION LOAD loads it at New, FCALL calls it,
// and INFO replication is what its incarnation check reads on acquire (the
// cheap section; without it the check reads INFO server too). A user
// without them runs the EVALSHA scripts, as aclRule's does.
const aclRuleFunctions = aclRule + " +function|load +fcall +info|replication"

const (
	// nodeTimeout bounds every request, also those a call leaves running
	// once a majority answered; the tests wait for every node's notice,
	// and a request cut by it sends none (at 250ms a release under CI's
	// load, two test binaries on two cores with -race, notified 2 of 3).
	nodeTimeout = time.Second
	waitFor     = 5 * time.Second // bounds every wait on an event
	tick        = 5 * time.Millisecond
	password    = "s3cret-Pa55"
)

// setUser creates user on every server of g, through the default user,
// with rules after "reset on >password", and returns one go-redis client
// per server authenticated as user, closed on cleanup.
func setUser(t *testing.T, g *redistest.Group, user, rules string) []redis.UniversalClient {
	t.Helper()
	ctx := context.Background()
	args := append([]string{"reset", "on", ">" + password}, strings.Fields(rules)...)
	var nodes []redis.UniversalClient
	for _, s := range g.Servers() {
		admin := s.Client(t)
		require.NoError(t, admin.ACLSetUser(ctx, user, args...).Err(), "ACL SETUSER %s %s", user, args)
		nodes = append(nodes, userClient(t, s.Addr(), user))
	}
	return nodes
}

func userClient(t *testing.T, addr, user string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, Username: user, Password: password})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// without returns aclRule without the given words.
func without(words ...string) string {
	return strings.Join(slices.DeleteFunc(strings.Fields(aclRule), func(w string) bool {
		return slices.Contains(words, w)
	}), " ")
}

// alias is another address of the server at addr (IPv4-mapped IPv6), so
// that only its run_id tells it is the same server.
func alias(t *testing.T, addr, user string) *redis.Client {
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	return userClient(t, net.JoinHostPort("::ffff:127.0.0.1", port), user)
}

// TestACLLeastPrivilege runs everything redlock and lease do through a
// user that has exactly aclRule: New, Bootstrap, the one-server-one-vote
// check (INFO server inside a script), acquire, extend, ExtendAll (the
// leases' batched refresh), inspect, release, and a lease whose notices
// wake a waiter.
// It runs with aclRuleFunctions (FCALL), without its INFO replication (the
// check reads INFO server and replication instead), and with aclRule, whose
// user has no FUNCTION rights (EVALSHA).
func TestACLLeastPrivilege(t *testing.T) {
	skipShort(t)
	for _, tc := range []struct {
		mode    string
		rule    string
		preload bool // an operator loaded the library
		fcall   bool
	}{
		{"FCALL", aclRuleFunctions, false, true},
		{"FCALL without INFO replication", aclRule + " +function|load +fcall", false, true},
		{"FCALL, the library loaded by an operator", aclRule + " +fcall +info|replication", true, true},
		{"EVALSHA: no FUNCTION LOAD, no library", aclRule + " +fcall +info|replication", false, false},
		{"EVALSHA", aclRule, false, false},
	} {
		t.Run(tc.mode, func(t *testing.T) { leastPrivilege(t, tc.rule, tc.preload, tc.fcall) })
	}
}

// leastPrivilege is TestACLLeastPrivilege with rule (and the library
// loaded first by the default user with preload); fcall is the mode every
// node must be in.
func leastPrivilege(t *testing.T, rule string, preload, fcall bool) {
	ctx := context.Background()
	g := redistest.Start(t, 3)
	if preload {
		for _, c := range g.Clients(t) {
			require.NoError(t, c.FunctionLoad(ctx, scripts.LibrarySource).Err())
		}
	}
	nodes := setUser(t, g, "redlease", rule)
	logs, logger := newLogBuffer(t)

	c, err := redlock.New(ctx, redlock.Config{NodeTimeout: nodeTimeout, Logger: logger}, nodes...)
	require.NoError(t, err)
	defer c.Close()
	for _, n := range c.Internal().Heard() {
		assert.Equal(t, fcall, n.Function, "the node's mode (FCALL or EVALSHA)")
	}
	assert.NotContains(t, logs.String(), "did not answer", "every node answered the probe")
	assert.Contains(t, logs.String(), "maxmemory-policy not checked", "CONFIG GET is refused and skipped")
	require.NoError(t, c.Bootstrap(ctx))

	// INFO server works inside the scripts: one server behind two
	// addresses is one vote, refused by its run_id.
	_, err = redlock.New(ctx, redlock.Config{NodeTimeout: nodeTimeout, Logger: logger}, nodes[0], alias(t, g.Server(0).Addr(), "redlease"))
	require.ErrorIs(t, err, redlock.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "run_id")

	t.Run("redlock", func(t *testing.T) { aclLock(t, c) })
	t.Run("lease with notices", func(t *testing.T) { aclLeaseNotices(t, g, c) })
}

// TestACLLibraryFlushed: a user that may FCALL but not load the library
// (an operator loaded it) meets a server whose functions were flushed: its
// calls run the EVAL scripts, and the node stays in EVALSHA mode.
func TestACLLibraryFlushed(t *testing.T) {
	skipShort(t)
	ctx := context.Background()
	g := redistest.Start(t, 3)
	admins := g.Clients(t)
	for _, c := range admins {
		require.NoError(t, c.FunctionLoad(ctx, scripts.LibrarySource).Err())
	}
	c, err := redlock.New(ctx, redlock.Config{NodeTimeout: nodeTimeout, Logger: testLogger(t)},
		setUser(t, g, "redlease", aclRule+" +fcall +info|replication")...)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Bootstrap(ctx))
	for _, n := range c.Internal().Heard() {
		require.True(t, n.Function, "FCALL mode")
	}
	for _, a := range admins {
		require.NoError(t, a.FunctionFlush(ctx).Err())
	}
	// A call returns at a quorum, so a node may get its first call after
	// the flush in a later one: acquire and release until each had one.
	require.Eventually(t, func() bool {
		l, err := c.TryAcquire(ctx, "app:flushed", 5*time.Second)
		require.NoError(t, err, "the EVAL scripts run")
		require.NoError(t, l.Release(ctx))
		for _, n := range c.Internal().Heard() {
			if n.Function {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond, "the nodes are in EVALSHA mode now")
}

// aclLock: acquire, extend, ExtendAll, inspect and release of a lock.
func aclLock(t *testing.T, c *redlock.Client) {
	ctx := context.Background()
	l, err := c.TryAcquire(ctx, "app:lock", 5*time.Second)
	require.NoError(t, err)
	assert.Positive(t, l.Token())
	require.NoError(t, l.Extend(ctx, 0))
	for _, err := range c.ExtendAll(ctx, []*redlock.Lock{l}) {
		require.NoError(t, err, "ExtendAll (extend_many, the leases' refresh)")
	}
	in, err := c.Inspect(ctx, "app:lock")
	require.NoError(t, err)
	assert.Equal(t, l.Value(), in.Value)
	assert.Equal(t, l.Token(), in.Token)
	err = l.Release(ctx)
	require.NoError(t, err)
	_, err = c.Inspect(ctx, "app:lock")
	require.ErrorIs(t, err, redlock.ErrNoHolder)
}

// aclLeaseNotices: a lease whose release notice wakes a waiter.
func aclLeaseNotices(t *testing.T, g *redistest.Group, c *redlock.Client) {
	ctx := context.Background()
	nodes := c.Internal().Nodes()
	const key = "app:lease"
	admins := g.Clients(t)
	sub, err := c.Internal().Subscribe(ctx, notice.Channel(key))
	require.NoError(t, err)
	defer sub.Close()
	waitSubscribers(t, admins, notice.Channel(key), 1)

	cfg := lease.Config{TTL: 3 * time.Second, ID: "alice", Metadata: map[string]string{"zone": "eu"}}
	alice, err := lease.Acquire(ctx, c, key, cfg)
	require.NoError(t, err)
	waitNotices(t, sub, notice.Message{Kind: notice.Acquired, Value: alice.Holder().Value}.Encode(), len(nodes))
	info, err := c.Inspect(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "alice", info.ID)
	assert.Equal(t, map[string]string{"zone": "eu"}, info.Metadata)

	// A waiter whose polling delay is far beyond the test's wait
	// ([15s, 45s]) takes over only if the release notice wakes it.
	type result struct {
		l   *lease.Lease
		err error
	}
	got := make(chan result, 1)
	var wg sync.WaitGroup
	wctx, cancel := context.WithTimeout(ctx, 2*waitFor)
	defer cancel()
	wg.Go(func() {
		l, err := lease.Acquire(wctx, c, key, lease.Config{TTL: 3 * time.Second, ID: "bob", RetryDelay: 30 * time.Second})
		got <- result{l, err}
	})
	defer wg.Wait()
	waitSubscribers(t, admins, notice.Channel(key), 2)

	require.NoError(t, alice.Release(ctx))
	waitNotices(t, sub, notice.Message{Kind: notice.Released}.Encode(), len(nodes))
	select {
	case r := <-got:
		require.NoError(t, r.err)
		assert.Equal(t, "bob", r.l.Holder().ID)
		assert.Greater(t, r.l.Token(), alice.Token())
		require.NoError(t, r.l.Release(ctx))
	case <-time.After(waitFor):
		t.Fatal("the waiter was not woken by the release notice")
	}
}

// waitSubscribers waits until channel has at least n subscribers on every
// server.
func waitSubscribers(t *testing.T, admins []*redis.Client, channel string, n int64) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, a := range admins {
			m, err := a.PubSubNumSub(context.Background(), channel).Result()
			if err != nil || m[channel] < n {
				return false
			}
		}
		return true
	}, waitFor, tick, "%d subscribers on %s", n, channel)
}

// waitNotices waits until payload arrived from n distinct nodes.
func waitNotices(t *testing.T, sub redlockx.Subscription, payload string, n int) {
	t.Helper()
	from := map[string]bool{}
	timeout := time.After(waitFor)
	for len(from) < n {
		select {
		case m := <-sub.C():
			if m.Payload == payload {
				from[m.Node] = true
			}
		case <-timeout:
			t.Fatalf("notice %q from %d of %d nodes", payload, len(from), n)
		}
	}
}

// TestACLMissingPermission removes one permission of aclRule at a time
// and checks that what redlock returns says which one is missing, so that
// an operator can fix the rule from the error alone. Redis names a refused
// top-level command (NOPERM ... 'evalsha'), but neither a refused key ("one
// of the keys used as arguments") nor a command refused inside a script
// ("can't run this command or subcommand"): there redlock has to add the
// names itself.
func TestACLMissingPermission(t *testing.T) {
	skipShort(t)
	g := redistest.Start(t, 3)
	bootstrap(t, g)
	for i, tc := range missingCases {
		t.Run(tc.name, func(t *testing.T) { checkMissing(t, g, "user"+strconv.Itoa(i), tc) })
	}
	t.Run("no script load", func(t *testing.T) { noScriptLoad(t, g) })
	t.Run("no notice channel", func(t *testing.T) { noNoticeChannel(t, g) })
	t.Run("no info", func(t *testing.T) { noInfo(t, g) })
}

// missingCase is a rule that lacks a permission, and what the error of
// TryAcquire, or of New, says about it.
type missingCase struct {
	name  string
	rules string
	key   string
	// want are parts of the error of TryAcquire, or of New.
	want []string
	// atNew: New's probe of the nodes meets the refusal already.
	atNew bool
}

var missingCases = []missingCase{
	{"no evalsha", without("+evalsha"), "app:a", []string{"NOPERM", "'evalsha'"}, true},
	// EVALSHA suffices while the scripts are cached; after a restart
	// or SCRIPT FLUSH, go-redis falls back to EVAL.
	{"no eval", without("+eval"), "app:b", []string{"NOPERM", "'eval'"}, false},
	{"lock key outside the key patterns", aclRule, "other:c", []string{"NOPERM", `"other:c"`}, false},
	// Redis says "no permissions to access one of the keys used as
	// arguments" (7.0) or "No permissions to access a key" (7.2+,
	// Valkey): redlock adds which script and keys it used.
	{"no marker key", without("~{redlease}:marker"), "app:d", []string{"NOPERM", "{redlease}:marker"}, true},
	// A command refused inside a script is reported with the code
	// ERR ("ERR The user executing the script can't run this command
	// or subcommand" in 7.0, "ERR ACL failure in script: ..." in 7.2+
	// and Valkey), which redlock's classifier knows as a refusal
	// (redlock/rediserr.go); redlock adds the script's commands.
	{"no time", without("+time"), "app:e", []string{"TIME"}, true},
	// INCR is the acquire script's alone (the grant of a token): New
	// does not meet the refusal, the first acquisition does.
	{"no incr", without("+incr"), "app:f", []string{"INCR"}, false},
}

// checkMissing: a user with tc's rules is refused, by New or by its first
// acquisition, with a final error naming what is missing.
func checkMissing(t *testing.T, g *redistest.Group, user string, tc missingCase) {
	ctx := context.Background()
	nodes := setUser(t, g, user, tc.rules)
	c, err := redlock.New(ctx, redlock.Config{NodeTimeout: nodeTimeout, Logger: testLogger(t)}, nodes...)
	if tc.atNew {
		// New's probe needs the permission: New refuses the
		// nodes for good, naming what is missing.
		require.ErrorIs(t, err, redlock.ErrAccessDenied)
		for _, w := range tc.want {
			assert.Contains(t, err.Error(), w, "the error names what is missing")
		}
		return
	}
	require.NoError(t, err)
	defer c.Close()

	if tc.name == "no eval" {
		l, err := c.TryAcquire(ctx, tc.key, 5*time.Second)
		require.NoError(t, err, "the scripts are cached: EVALSHA suffices")
		err = l.Release(ctx)
		require.NoError(t, err)
		for _, s := range g.Servers() {
			require.NoError(t, s.Client(t).ScriptFlush(ctx).Err())
		}
	}
	_, err = c.TryAcquire(ctx, tc.key, 5*time.Second)
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	for _, w := range tc.want {
		assert.Contains(t, err.Error(), w, "the error names what is missing")
	}
	// Whatever the server's wording, a refusal is final: Acquire
	// returns at once instead of retrying until its context ends.
	assert.True(t, redlock.IsFinal(err), "a refused permission is final: %v", err)
}

// noScriptLoad: New refuses a user that may not SCRIPT LOAD, naming it.
func noScriptLoad(t *testing.T, g *redistest.Group) {
	ctx := context.Background()
	nodes := setUser(t, g, "noload", without("+script|load"))
	_, err := redlock.New(ctx, redlock.Config{NodeTimeout: nodeTimeout, Logger: testLogger(t)}, nodes...)
	require.ErrorIs(t, err, redlock.ErrAccessDenied)
	assert.Contains(t, err.Error(), "'script|load'")
}

// noNoticeChannel: a release notice is a hint: a user that may not
// PUBLISH on the channel still releases its lock.
func noNoticeChannel(t *testing.T, g *redistest.Group) {
	ctx := context.Background()
	nodes := setUser(t, g, "nochannel", without("&app:*:notice"))
	c, err := redlock.New(ctx, redlock.Config{NodeTimeout: nodeTimeout, Logger: testLogger(t)}, nodes...)
	require.NoError(t, err)
	defer c.Close()
	l, err := c.TryAcquire(ctx, "app:f", 5*time.Second, redlockx.ReleaseNotice(notice.Channel("app:f"), notice.Message{Kind: notice.Released}.Encode()))
	require.NoError(t, err)
	err = l.Release(ctx)
	// BUG: release.lua deletes the key, then its PUBLISH is refused
	// and the script fails: the node counts as an error although the
	// key is gone, and Release reports a *QuorumError (Op "release").
	assert.NoError(t, err, "the lock was released; only its notice was refused")
	for _, s := range g.Servers() {
		assert.Zero(t, s.Client(t).Exists(ctx, "app:f").Val(), "the key is deleted on %s", s.Addr())
	}
}

// noInfo: without INFO inside scripts, run_id is unknown: one server
// behind two addresses counts twice (docs/design.md S7), and a replaced
// server is only detected when it lost the marker.
func noInfo(t *testing.T, g *redistest.Group) {
	ctx := context.Background()
	nodes := setUser(t, g, "noinfo", without("+info|server"))
	logs, logger := newLogBuffer(t)
	c, err := redlock.New(ctx, redlock.Config{NodeTimeout: nodeTimeout, Logger: logger},
		nodes[0], alias(t, g.Server(0).Addr(), "noinfo"), nodes[1])
	if err == nil {
		defer c.Close()
	}
	// BUG: probe.lua's redis.pcall('INFO') swallows the refusal; the
	// run_id is '' as under miniredis, and New neither refuses the
	// duplicate nor warns that it cannot check.
	assert.True(t, err != nil || strings.Contains(logs.String(), "INFO"),
		"New accepted one server twice without a word: INFO was refused inside the scripts, and nothing says so")
}
