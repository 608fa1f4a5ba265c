package lease

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/redlease/redlease/internal/testing/locktest"
	"github.com/redlease/redlease/internal/testing/testnodes"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/redlock"
)

func TestMain(m *testing.M) { testnodes.Main(m) }

// memNode is a miniredis served in memory (net.Pipe, no listener), so it
// works inside a testing/synctest bubble, with TTLs that follow the
// bubble's fake clock. It counts the scripts it runs, and can be made to
// fail or to hang.
type memNode struct {
	*miniredis.Miniredis
	mu      sync.Mutex
	mode    int           // modeOK, modeFail, modeHang
	gate    chan struct{} // closed by heal, to let hung requests through
	scripts int           // EVAL and EVALSHA received
	extends int           // locks in the extend_many calls received
}

const (
	modeOK = iota
	modeFail
	modeHang
)

// memNodes starts n in-memory nodes and returns them with a go-redis client
// each; everything is closed on cleanup. It skips the test when
// testnodes.EnvServerOnly is set (make test's Valkey pass).
func memNodes(t testing.TB, n int) ([]*memNode, []redis.UniversalClient) {
	t.Helper()
	testnodes.SkipInMemory(t)
	var ns []*memNode
	var cs []redis.UniversalClient
	for i := range n {
		m := &memNode{Miniredis: miniredis.NewMiniRedis()}
		m.ClockTTL(true)
		conn, err := m.Dial() // starts the server, without a listener
		require.NoError(t, err)
		_ = conn.Close()
		m.Server().SetPreHook(m.hook)
		t.Cleanup(m.Close)
		t.Cleanup(m.heal) // before Close: a hung peer would block it
		c := redis.NewClient(&redis.Options{
			// An IP literal (TEST-NET-1, never dialled): a host name would
			// make go-redis resolve it, and DNS cannot run in a bubble.
			Addr: fmt.Sprintf("192.0.2.%d:6379", i+1),
			// No CLIENT MAINT_NOTIFICATIONS handshake: miniredis has none.
			MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
			Dialer: func(context.Context, string, string) (net.Conn, error) {
				return m.Dial()
			},
		})
		t.Cleanup(func() { _ = c.Close() })
		ns = append(ns, m)
		cs = append(cs, c)
	}
	return ns, cs
}

// hook runs before every command the node receives, including the
// commands a script calls, which run under miniredis' lock: failing or
// hanging acts on scripts only (every redlock request is one), never on
// what runs inside one, and never on Pub/Sub or connection set-up.
func (m *memNode) hook(p *server.Peer, cmd string, args ...string) bool {
	if cmd != "EVAL" && cmd != "EVALSHA" {
		return false
	}
	m.mu.Lock()
	m.scripts++
	// extend_many: numkeys, the marker and the locks' keys (probe and
	// raise send the marker alone), then 4 arguments and a value per lock.
	if nk, err := strconv.Atoi(args[1]); err == nil && nk >= 2 && args[2] == "{redlease}:marker" {
		m.extends += len(args) - 2 - nk - 4
	}
	mode, gate := m.mode, m.gate
	m.mu.Unlock()
	switch mode {
	case modeFail:
		p.WriteError("ERR test: node down")
		return true
	case modeHang:
		<-gate
	}
	return false
}

// Scripts returns how many EVAL and EVALSHA the node received.
func (m *memNode) Scripts() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.scripts
}

// Extends returns how many lock keys the node was asked to extend by
// extend_many calls.
func (m *memNode) Extends() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.extends
}

// fail makes every script fail with a Redis error.
func (m *memNode) fail() { m.set(modeFail) }

// hang makes every script wait until heal: a node that accepts requests
// and never answers (as if paused).
func (m *memNode) hang() { m.set(modeHang) }

// heal makes the node answer normally again, hung requests included.
func (m *memNode) heal() { m.set(modeOK) }

func (m *memNode) set(mode int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gate != nil {
		close(m.gate)
		m.gate = nil
	}
	if mode == modeHang {
		m.gate = make(chan struct{})
	}
	m.mode = mode
}

// testLogger sends logs to t.Log.
func testLogger(t testing.TB) hclog.Logger { return testnodes.Logger(t, hclog.Trace) }

// newClient makes a bootstrapped redlock.Client over nodes, closed on
// cleanup.
func newClient(t testing.TB, cfg redlock.Config, nodes []redis.UniversalClient) *redlock.Client {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	return locktest.New(t, cfg, nodes, true)
}

// mustAcquire acquires key with one attempt and releases it on cleanup.
func mustAcquire(t testing.TB, ctx context.Context, c *redlock.Client, key string, cfg Config) *Lease {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	l, err := TryAcquire(ctx, c, key, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Release(context.Background()) })
	return l
}

// closed reports whether ch is closed, without waiting.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
