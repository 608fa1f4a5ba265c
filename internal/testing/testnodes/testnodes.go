// Package testnodes holds the helpers that the unit tests of every package
// share: embedded miniredis nodes, a logger writing to t.Log, the goleak
// option for go-redis's own redial goroutine, a server's error reply
// (ReplyError) and the run of an example program (RunExample). It does not
// import redlock, so that redlock's in-package tests can use it too.
//
// docs/design.md §7.1 describes the suites that use it.
package testnodes

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// IgnoreRedial is the goleak option for go-redis's redial goroutine: after
// dials to a dead server fail, it sleeps up to a second before it notices
// its pool was closed. Not ours to wait for.
var IgnoreRedial = goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial")

// EnvServerOnly, when set, makes Minis and MemMinis skip the test that
// calls them: make test runs the packages whose tests start real servers
// twice, on Redis and then on Valkey (docs/testing.md), and the second
// pass sets it, since a test on miniredis does not depend on the server
// binary and ran in the first pass.
const EnvServerOnly = "REDLEASE_SERVER_ONLY"

// SkipInMemory skips t when EnvServerOnly is set: for helpers that make
// in-memory nodes of their own.
func SkipInMemory(t testing.TB) {
	t.Helper()
	if os.Getenv(EnvServerOnly) != "" {
		t.Skipf("in-memory test (miniredis): %s is set; this pass runs the tests on real servers, the first pass ran this one", EnvServerOnly)
	}
}

// Minis starts n miniredis servers on TCP and returns them with a go-redis
// client each; everything is closed on cleanup. It skips the test when
// EnvServerOnly is set.
func Minis(t testing.TB, n int) ([]*miniredis.Miniredis, []redis.UniversalClient) {
	t.Helper()
	SkipInMemory(t)
	var ms []*miniredis.Miniredis
	var cs []redis.UniversalClient
	for range n {
		m := miniredis.RunT(t)
		c := redis.NewClient(&redis.Options{Addr: m.Addr()})
		t.Cleanup(func() { _ = c.Close() })
		ms = append(ms, m)
		cs = append(cs, c)
	}
	return ms, cs
}

// MemMinis starts n miniredis servers served in memory (net.Pipe, no
// listener) and returns them with a go-redis client each; everything is
// closed on cleanup. They work inside a testing/synctest bubble: a client
// waiting for a reply is durably blocked, and key TTLs and TIME follow the
// bubble's fake clock (ClockTTL). It skips the test when EnvServerOnly is
// set.
func MemMinis(t testing.TB, n int) ([]*miniredis.Miniredis, []redis.UniversalClient) {
	t.Helper()
	SkipInMemory(t)
	var ms []*miniredis.Miniredis
	var cs []redis.UniversalClient
	for i := range n {
		m := miniredis.NewMiniRedis()
		m.ClockTTL(true)
		conn, err := m.Dial() // starts the server, without a listener
		require.NoError(t, err)
		_ = conn.Close()
		t.Cleanup(m.Close)
		c := redis.NewClient(&redis.Options{
			// An IP literal (TEST-NET-1, never dialled): a host name would
			// make go-redis resolve it, and DNS cannot run in a bubble.
			Addr: fmt.Sprintf("192.0.2.%d:6379", i+1),
			// No CLIENT MAINT_NOTIFICATIONS handshake: miniredis has none.
			MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
			Dialer:                   func(context.Context, string, string) (net.Conn, error) { return m.Dial() },
		})
		t.Cleanup(func() { _ = c.Close() })
		ms = append(ms, m)
		cs = append(cs, c)
	}
	return ms, cs
}

// Logger sends logs at level and above to t.Log.
func Logger(t testing.TB, level hclog.Level) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: level, Output: tWriter{t}})
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// Main runs a package's tests (call it from TestMain) and then checks for
// leaked goroutines with goleak, ignoring IgnoreRedial and opts. It drops
// go-redis's own log lines first: a test that stops a server makes go-redis
// log every failed redial on stderr, hundreds of lines that would bury a
// failing test's report (go test prints a failed package's output whole,
// and CI shows its end).
func Main(m *testing.M, opts ...goleak.Option) {
	redis.SetLogger(quietRedis{})
	goleak.VerifyTestMain(m, append(opts, IgnoreRedial)...)
}

type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

// WaitValue waits until every one of ms holds value at key ("": no key),
// failing t after 5s. A call that returned at a majority may still have
// requests landing on the other nodes.
func WaitValue(t testing.TB, ms []*miniredis.Miniredis, key, value string) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, m := range ms {
			if v, _ := m.Get(key); v != value {
				return false
			}
		}
		return true
	}, 5*time.Second, time.Millisecond, "waiting for %q = %q on every node", key, value)
}

// Embedded starts n in-process miniredis servers on TCP, for the Example
// functions (which have no testing.T), and returns a go-redis client for
// each and the function that closes them all.
func Embedded(n int) (clients []redis.UniversalClient, stop func()) {
	var ms []*miniredis.Miniredis
	for range n {
		m := miniredis.NewMiniRedis()
		if err := m.Start(); err != nil {
			panic(err)
		}
		ms = append(ms, m)
		clients = append(clients, redis.NewClient(&redis.Options{Addr: m.Addr()}))
	}
	return clients, func() {
		for i := range ms {
			_ = clients[i].Close()
			ms[i].Close()
		}
	}
}
