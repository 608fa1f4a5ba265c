package redlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/locktest"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/redlock"
)

// servers is the real-server rig of this package's integration and safety
// tests (internal/testing/redistest's Rig): N redis-servers, each with a direct
// client used only to set up and check state, and node i of the Client
// under test, possibly through a fault proxy; plus the checks of a key's
// state on the servers that the tests share.
type servers struct {
	*redistest.Rig
}

// serversConfig describes a rig for startServers.
type serversConfig struct {
	n       int // servers, one node each
	proxied int // nodes 0..proxied-1 go through a faultproxy
	// options makes node i's go-redis options; default fastOptions.
	options func(i int, addr string) *redis.Options
	redis   redistest.Options
}

// startServers starts the rig cc describes; everything is stopped or closed
// on cleanup.
func startServers(t testing.TB, cc serversConfig) *servers {
	t.Helper()
	if cc.options == nil {
		cc.options = fastOptions
	}
	return &servers{redistest.StartRig(t, cc.n, redistest.RigOptions{Servers: cc.redis, Proxied: cc.proxied, Node: cc.options})}
}

// startKillable starts n servers for tests that kill and pause them: their
// nodes (NewNodes) have the short socket timeouts of killableOptions.
func startKillable(t testing.TB, n int, o redistest.Options) *servers {
	t.Helper()
	return startServers(t, serversConfig{n: n, redis: o, options: func(_ int, addr string) *redis.Options { return killableOptions(addr) }})
}

// startWithLocker starts 5 servers and a Client over them (NodeTimeout
// nodeTimeout), and returns them with a key unique to the test.
func startWithLocker(t *testing.T) (*servers, *redlock.Client, string) {
	t.Helper()
	cl := startServers(t, serversConfig{n: 5})
	return cl, cl.locker(t, redlock.Config{NodeTimeout: nodeTimeout}), testKey(t)
}

// fastOptions are redistest.FastOptions: short socket timeouts, no
// retries, one dial per request. Redlock's own NodeTimeout is what bounds
// the calls; these only bound the stragglers.
func fastOptions(_ int, addr string) *redis.Options { return redistest.FastOptions(addr) }

// defaultOptions are go-redis' defaults (5s dial, 3s read timeouts, 3
// retries): redlock must not depend on the caller's client options.
func defaultOptions(_ int, addr string) *redis.Options {
	return &redis.Options{Addr: addr}
}

// killableOptions are go-redis options for nodes that get killed or paused: short
// socket timeouts, no retries and one dial per request, so that requests
// still in flight when a call returns end quickly (Client.Close waits for
// them). Redlock's NodeTimeout is what bounds the calls themselves.
func killableOptions(addr string) *redis.Options {
	return &redis.Options{
		Addr:          addr,
		DialTimeout:   200 * time.Millisecond,
		ReadTimeout:   200 * time.Millisecond,
		WriteTimeout:  200 * time.Millisecond,
		PoolTimeout:   300 * time.Millisecond,
		MaxRetries:    -1,
		DialerRetries: 1,
	}
}

// locker makes a bootstrapped Client over the rig's nodes. Faults are
// healed on cleanup before the Client is closed, so that Close does not wait
// for requests stuck on a paused server or a held proxy.
func (s *servers) locker(t testing.TB, cfg redlock.Config) *redlock.Client {
	t.Helper()
	c := locktest.New(t, cfg, s.Nodes, true)
	t.Cleanup(s.Heal)
	return c
}

func testLogger(t testing.TB) hclog.Logger { return testnodes.Logger(t, hclog.Debug) }

func (s *servers) addr(i int) string { return s.Server(i).Addr() }

// waitGone waits until none of the given servers (all by default) holds
// value under key.
func (s *servers) waitGone(t testing.TB, key, value string, servers ...int) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, v := range s.Values(key, servers...) {
			if v == value {
				return false
			}
		}
		return true
	}, waitFor, pollTick, "value %q of %q still on a node", value, key)
}

// waitAbsent waits until key exists on none of the given servers (all by
// default).
func (s *servers) waitAbsent(t testing.TB, key string, servers ...int) {
	t.Helper()
	s.waitAbsentWithin(t, waitFor, key, servers...)
}

func (s *servers) waitAbsentWithin(t testing.TB, within time.Duration, key string, servers ...int) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, v := range s.Values(key, servers...) {
			if v != "" {
				return false
			}
		}
		return true
	}, within, pollTick, "%q still on a node", key)
}

// waitHeld waits until every server holds value under key: a call that
// returned at a majority may still have requests landing on the others.
func (s *servers) waitHeld(t testing.TB, key, value string) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, v := range s.Values(key) {
			if v != value {
				return false
			}
		}
		return true
	}, waitFor, pollTick, "value %q of %q not on every node", value, key)
}

// setForeign makes another client hold key on the given servers.
func (s *servers) setForeign(t testing.TB, key string, servers ...int) {
	t.Helper()
	for _, i := range servers {
		require.NoError(t, s.Direct[i].Set(context.Background(), key, foreignValue, 0).Err())
	}
}

// freeAfter frees key on the given servers once every acquire request of
// l has finished: a request still on its way to a server that another
// client held would otherwise find the key free and grant l there too.
func (s *servers) freeAfter(t testing.TB, l *redlock.Lock, key string, servers ...int) {
	t.Helper()
	require.Eventually(t, l.Settled, waitFor, pollTick, "an acquire request of %q never finished", key)
	s.free(t, key, servers...)
}

func (s *servers) free(t testing.TB, key string, servers ...int) {
	t.Helper()
	for _, i := range servers {
		require.NoError(t, s.Direct[i].Del(context.Background(), key).Err())
	}
}

// counter is server i's fencing counter of key ("" when absent).
func (s *servers) counter(t testing.TB, key string, i int) string {
	t.Helper()
	v, err := s.Direct[i].Get(context.Background(), key+":fence").Result()
	if errors.Is(err, redis.Nil) {
		return ""
	}
	require.NoError(t, err)
	return v
}
