package redlock

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redlease/redlease/internal/rediserr"
	"github.com/redlease/redlease/internal/redlockx"
	"github.com/redlease/redlease/internal/testing/testnodes"

	"github.com/alicebob/miniredis/v2/server"
	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unitCfg: generous timeouts, since miniredis runs Lua slowly under -race.
var unitCfg = Config{NodeTimeout: time.Second}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"negative node timeout", Config{NodeTimeout: -time.Second}, "NodeTimeout (-1s)"},
		{"drift factor too big", Config{DriftFactor: 0.7}, "DriftFactor (0.7)"},
		{"negative drift factor", Config{DriftFactor: -0.1}, "DriftFactor (-0.1)"},
		{"negative retry delay", Config{RetryDelay: -time.Millisecond}, "RetryDelay (-1ms)"},
		{"negative min validity", Config{MinValidity: -time.Millisecond}, "MinValidity (-1ms)"},
		{"negative max ttl", Config{MaxTTL: -time.Second}, "MaxTTL (-1s)"},
		{"max ttl below timeouts", Config{MaxTTL: 50 * time.Millisecond}, "MaxTTL (50ms)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.validate()
			require.ErrorIs(t, err, ErrInvalidArgument)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	require.NoError(t, Config{}.validate())
	d := Config{}.withDefaults()
	assert.Equal(t, DefaultNodeTimeout, d.NodeTimeout)
	assert.Equal(t, DefaultMaxTTL, d.MaxTTL)
	assert.Equal(t, DefaultRetryDelay, d.RetryDelay)
	assert.InDelta(t, DefaultDriftFactor, d.DriftFactor, 0)
}

func TestNewRefusesBadNodes(t *testing.T) {
	ctx := context.Background()
	_, nodes := testnodes.Minis(t, 2)
	_, err := New(ctx, Config{})
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), "no nodes")

	_, err = New(ctx, Config{}, nodes[0], nil)
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), "node 1 is nil")

	again := redis.NewClient(&redis.Options{Addr: nodes[0].(*redis.Client).Options().Addr})
	t.Cleanup(func() { _ = again.Close() })
	_, err = New(ctx, Config{}, nodes[0], nodes[1], again)
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), "nodes 0 and 2 are the same server ("+again.Options().Addr+")")

	_, err = New(ctx, Config{NodeTimeout: -1}, nodes...)
	require.ErrorIs(t, err, ErrInvalidArgument)
}

func TestBadArguments(t *testing.T) {
	ctx := context.Background()
	_, nodes := testnodes.Minis(t, 3)
	c := newClient(t, unitCfg, nodes)
	for _, tc := range []struct {
		name string
		key  string
		ttl  time.Duration
		want string
	}{
		{"empty key", "", time.Second, "key must not be empty"},
		{"zero ttl", "k", 0, "TTL (0s) must be positive"},
		{"negative ttl", "k", -time.Second, "TTL (-1s) must be positive"},
		{"sub-millisecond ttl", "k", 1500 * time.Microsecond, "TTL (1.5ms) must be a whole number of milliseconds"},
		{"ttl above max", "k", time.Minute, "TTL (1m0s) is above MaxTTL (30s)"},
		{"ttl below timeouts", "k", 2 * time.Second, "TTL (2s) must exceed NodeTimeout*2 + drift"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.TryAcquire(ctx, tc.key, tc.ttl)
			require.ErrorIs(t, err, ErrInvalidArgument)
			assert.Contains(t, err.Error(), tc.want)
			start := time.Now()
			_, err = c.Acquire(ctx, tc.key, tc.ttl)
			require.ErrorIs(t, err, ErrInvalidArgument, "a bad argument is final: Acquire does not retry")
			assert.Less(t, time.Since(start), time.Second)
		})
	}
	_, err := c.TryAcquire(ctx, "k", 5*time.Second, AcquireOption(redlockx.Value(func(string) string { return "fixed" })))
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), "nonce")
	_, err = c.Inspect(ctx, "")
	require.ErrorIs(t, err, ErrInvalidArgument)
}

func TestEvenNodesWarn(t *testing.T) {
	_, nodes := testnodes.Minis(t, 2)
	var buf bytes.Buffer
	c, err := New(context.Background(), Config{Logger: hclog.New(&hclog.LoggerOptions{Output: &buf})}, nodes...)
	require.NoError(t, err)
	defer c.Close()
	assert.Contains(t, buf.String(), "even number of nodes")
	assert.Equal(t, 2, c.quorum)
}

func TestSingleNode(t *testing.T) {
	ctx := context.Background()
	_, nodes := testnodes.Minis(t, 1)
	c := newClient(t, unitCfg, nodes)
	assert.Equal(t, 1, c.quorum)
	l, err := c.TryAcquire(ctx, "one", 5*time.Second)
	require.NoError(t, err)
	_, err = c.TryAcquire(ctx, "one", 5*time.Second)
	require.ErrorIs(t, err, ErrNotAcquired)
	require.NoError(t, l.Release(ctx))
	_, err = c.TryAcquire(ctx, "one", 5*time.Second)
	require.NoError(t, err, "released: free again")
}

func TestQuarantineOfFreshNodes(t *testing.T) {
	ctx := context.Background()
	ms, nodes := testnodes.Minis(t, 3)
	c, err := New(ctx, Config{NodeTimeout: time.Second, MaxTTL: 5 * time.Second, Logger: testLogger(t)}, nodes...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })

	// New started every node's quarantine: nobody may lock yet (fail closed).
	_, err = c.TryAcquire(ctx, "k", 4*time.Second)
	require.ErrorIs(t, err, ErrNotAcquired)
	var qe *QuorumError
	require.ErrorAs(t, err, &qe)
	require.GreaterOrEqual(t, len(QuarantinedNodes(qe)), 2, "a majority is quarantined")
	for _, n := range QuarantinedNodes(qe) {
		assert.Greater(t, n.Quarantine, 4*time.Second)
		assert.LessOrEqual(t, n.Quarantine, 5*time.Second)
	}
	assert.Contains(t, err.Error(), "quarantined for")

	// Once MaxTTL has passed on the servers' clocks, the nodes are raised
	// (in the background, after the first attempt sees them) and vote.
	for _, m := range ms {
		m.SetTime(time.Now().Add(6 * time.Second))
	}
	require.Eventually(t, func() bool {
		l, err := c.TryAcquire(ctx, "k", 4*time.Second)
		if err != nil {
			return false
		}
		_ = l.Release(ctx)
		return true
	}, 5*time.Second, 10*time.Millisecond)
}

func TestBootstrapEndsFirstQuarantine(t *testing.T) {
	ctx := context.Background()
	_, nodes := testnodes.Minis(t, 3)
	c, err := New(ctx, unitCfg, nodes...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = c.TryAcquire(ctx, "k", 5*time.Second)
	require.ErrorIs(t, err, ErrNotAcquired)
	require.NoError(t, c.Bootstrap(ctx))
	l, err := c.TryAcquire(ctx, "k", 5*time.Second)
	require.NoError(t, err)
	err = l.Release(ctx)
	require.NoError(t, err)
}

// A node that forgot everything (FLUSHALL) is quarantined, and its fencing
// floor is raised from a healthy majority, so that a later majority that
// includes it never hands out a token below one already given.
func TestForgetfulNodeFloor(t *testing.T) {
	ctx := context.Background()
	ms, nodes := testnodes.Minis(t, 5)
	cfg := unitCfg
	cfg.MaxTTL = 5 * time.Second
	c := newClient(t, cfg, nodes)

	// Tokens 1..3 are written on nodes 0,1,2 only (3 and 4 are taken).
	for _, m := range ms[3:] {
		require.NoError(t, m.Set("res", "someone-else"))
	}
	var last uint64
	for range 3 {
		l, err := c.TryAcquire(ctx, "res", 4*time.Second)
		require.NoError(t, err)
		require.Greater(t, l.Token(), last)
		last = l.Token()
		// Its requests to nodes 3 and 4 (a no) must have run before the
		// test frees those nodes, or one landing late takes the key there.
		require.Eventually(t, l.Settled, 5*time.Second, time.Millisecond)
		err = l.Release(ctx)
		require.NoError(t, err)
	}
	require.Equal(t, uint64(3), last)

	// Node 0 forgets everything; nodes 1 and 2 get taken, 3 and 4 free up.
	ms[0].FlushAll()
	for _, m := range ms[3:] {
		m.Del("res")
	}
	for _, m := range ms[1:3] {
		require.NoError(t, m.Set("res", "someone-else"))
	}
	_, err := c.TryAcquire(ctx, "res", 4*time.Second)
	require.ErrorIs(t, err, ErrNotAcquired, "node 0 is quarantined: only 2 yes votes")
	var qe *QuorumError
	require.ErrorAs(t, err, &qe)
	require.Len(t, QuarantinedNodes(qe), 1)
	assert.Equal(t, ms[0].Addr(), QuarantinedNodes(qe)[0].Node)

	// The attempt raised node 0's floor from the healthy majority (in the
	// background); once its quarantine is over it votes, and the token of
	// the majority {0,3,4} (counters there: 0, 0 and the floor) exceeds 3.
	require.Eventually(t, func() bool {
		return ms[0].HGet(markerKey, "ok") == "1"
	}, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, "3", ms[0].HGet(markerKey, "b"))
	// The failed attempt is undone in the background too: its grants on
	// nodes 3 and 4 (the only ones there, each counted by the fencing
	// counter, which only a grant moves) must have run, possibly after
	// the attempt returned, and been undone before the next attempt.
	require.Eventually(t, func() bool {
		for _, m := range ms[3:] {
			if n, _ := m.Get("res:fence"); n != "1" || m.Exists("res") {
				return false
			}
		}
		return true
	}, 5*time.Second, 5*time.Millisecond, "the failed attempt was not undone")
	ms[0].SetTime(time.Now().Add(6 * time.Second))
	l, err := c.TryAcquire(ctx, "res", 4*time.Second)
	require.NoError(t, err)
	assert.Equal(t, uint64(4), l.Token())
	err = l.Release(ctx)
	require.NoError(t, err)
}

func TestExtendAfterDeadline(t *testing.T) {
	ctx := context.Background()
	ms, nodes := testnodes.Minis(t, 3)
	// NodeTimeout leaves room for a busy machine under -race (20ms did
	// not: a fencing fan-out timed out); the TTL is the shortest it allows.
	c := newClient(t, Config{NodeTimeout: 200 * time.Millisecond}, nodes)
	l, err := c.TryAcquire(ctx, "short", 500*time.Millisecond)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return !l.Held() }, 5*time.Second, time.Millisecond)
	assert.Equal(t, time.Duration(0), l.Remaining())
	// The keys are still on the servers (miniredis does not expire them
	// by itself), yet the holder's deadline is final (docs/design.md S2, S4).
	for _, m := range ms {
		assert.True(t, m.Exists("short"))
	}
	err = l.Extend(ctx, 0)
	require.ErrorIs(t, err, ErrNotHeld)
	assert.Contains(t, err.Error(), "local deadline")
}

func TestExtendNeverRecreates(t *testing.T) {
	ctx := context.Background()
	ms, c := unitNodes(t, 5)
	// On every node: a straggler's SET could land after the deletes below
	// and make the majority whole again.
	l := acquired(t, c, ms, "x", 10*time.Second)
	for _, m := range ms[:3] {
		m.Del("x")
	}
	err := l.Extend(ctx, 0)
	require.ErrorIs(t, err, ErrNotExtended)
	for _, m := range ms[:3] {
		assert.False(t, m.Exists("x"), "extend re-created an expired key")
	}
	assert.True(t, l.Held(), "a failed extend keeps the old deadline")
}

func TestWrongTypeIsFinal(t *testing.T) {
	ctx := context.Background()
	ms, c := unitNodes(t, 3)
	for _, m := range ms {
		_, err := m.Lpush("list", "a")
		require.NoError(t, err)
	}
	_, err := c.TryAcquire(ctx, "list", 5*time.Second)
	require.ErrorIs(t, err, ErrNotAcquired)
	assert.Contains(t, err.Error(), "WRONGTYPE")

	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = c.Acquire(ctx, "list", 5*time.Second)
	require.ErrorIs(t, err, ErrNotAcquired)
	require.NoError(t, ctx.Err(), "Acquire must stop on a final error, not wait for ctx")
}

func TestGarbageCounter(t *testing.T) {
	ctx := context.Background()
	ms, c := unitNodes(t, 3)
	for _, m := range ms {
		require.NoError(t, m.Set("g:fence", "not-a-number"))
	}
	_, err := c.TryAcquire(ctx, "g", 5*time.Second)
	require.ErrorIs(t, err, ErrNotAcquired)
	assert.Contains(t, err.Error(), "fencing counter g:fence is not a number")
}

// A server answering with replies of the wrong shape gets an error vote,
// never a panic or a hang.
func TestGarbageReplies(t *testing.T) {
	ctx := context.Background()
	for _, garbage := range []string{
		"$5\r\nhello\r\n",
		"*2\r\n:1\r\n:2\r\n",
		"*6\r\n$1\r\nx\r\n$1\r\ny\r\n:0\r\n:0\r\n:0\r\n$-1\r\n",
		"*6\r\n:9\r\n:0\r\n:0\r\n:0\r\n:0\r\n$0\r\n\r\n",
		"*-1\r\n",
		":7\r\n",
		"!!not resp at all\r\n",
	} {
		t.Run(strings.TrimSpace(garbage[:min(len(garbage), 8)]), func(t *testing.T) {
			_, good := testnodes.Minis(t, 2)
			bad := redis.NewClient(&redis.Options{Addr: fakeServer(t, garbage), MaxRetries: -1})
			t.Cleanup(func() { _ = bad.Close() })
			c, err := New(ctx, Config{NodeTimeout: time.Second, DisableQuarantine: true, Logger: testLogger(t)}, good[0], good[1], bad)
			require.NoError(t, err, "an unreadable node is logged, not refused")
			t.Cleanup(func() { _ = c.Close() })
			l, err := c.TryAcquire(ctx, "k", 5*time.Second)
			require.NoError(t, err, "two good nodes of three are a majority")
			in, err := c.Inspect(ctx, "k")
			require.NoError(t, err, "two good nodes of three are a majority")
			assert.Equal(t, l.Value(), in.Value)
			assert.Error(t, in.Nodes[2].Err, "the garbage node shows as an error")
			err = l.Release(ctx)
			require.NoError(t, err)
		})
	}
}

// fakeServer answers HELLO with an error (so go-redis speaks RESP2), CLIENT
// with OK, and every other command with reply.
func fakeServer(t *testing.T, reply string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	var conns sync.Map
	t.Cleanup(func() {
		conns.Range(func(k, _ any) bool { _ = k.(net.Conn).Close(); return true })
	})
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Store(conn, true)
			wg.Go(func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				for {
					cmd, err := readCommand(r)
					if err != nil {
						return
					}
					out := reply
					switch strings.ToUpper(cmd) {
					case "HELLO":
						out = "-ERR unknown command 'HELLO'\r\n"
					case "CLIENT", "PING":
						out = "+OK\r\n"
					}
					if _, err := conn.Write([]byte(out)); err != nil {
						return
					}
				}
			})
		}
	})
	return ln.Addr().String()
}

// readCommand reads one RESP array of bulk strings and returns its first
// element.
func readCommand(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil || line[0] != '*' {
		return "", fmt.Errorf("bad command %q", line)
	}
	var first string
	for i := range n {
		head, err := r.ReadString('\n') // $len
		if err != nil {
			return "", err
		}
		size, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(head, "$")))
		if err != nil {
			return "", fmt.Errorf("bad argument length %q", head)
		}
		arg := make([]byte, size+2) // an argument may hold newlines (a script's source)
		if _, err := io.ReadFull(r, arg); err != nil {
			return "", err
		}
		if i == 0 {
			first = string(arg[:size])
		}
	}
	return first, nil
}

func TestAcquireUntilContextEnds(t *testing.T) {
	ctx := context.Background()
	_, nodes := testnodes.Minis(t, 3)
	c := newClient(t, Config{NodeTimeout: time.Second, RetryDelay: 10 * time.Millisecond}, nodes)
	l, err := c.TryAcquire(ctx, "busy", 10*time.Second)
	require.NoError(t, err)
	defer l.Release(ctx)

	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = c.Acquire(cctx, "busy", 10*time.Second)
	require.ErrorIs(t, err, ErrNotAcquired)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	attempts := 0
	_, err = c.Acquire(ctx, "busy", 10*time.Second, WithRetry(func(attempt int) (time.Duration, bool) {
		attempts++
		return time.Millisecond, attempt <= 3
	}))
	require.ErrorIs(t, err, ErrNotAcquired)
	assert.Equal(t, 4, attempts, "three retries after the first attempt")

	// Released: a waiting Acquire gets it.
	done := make(chan error, 1)
	go func() {
		l2, err := c.Acquire(ctx, "busy", 10*time.Second)
		if err == nil {
			err = l2.Release(ctx)
		}
		done <- err
	}()
	err = l.Release(ctx)
	require.NoError(t, err)
	require.NoError(t, <-done)
}

func TestInspect(t *testing.T) {
	ctx := context.Background()
	ms, c := unitNodes(t, 5)
	l := acquired(t, c, ms, "seen", 10*time.Second) // the loop below expects it on every node
	in, err := c.Inspect(ctx, "seen")
	require.NoError(t, err)
	assert.Equal(t, l.Value(), in.Value)
	assert.Equal(t, l.Token(), in.Token)
	assert.Greater(t, in.Remaining, 9*time.Second)
	require.Len(t, in.Nodes, 5)
	for _, n := range in.Nodes {
		assert.False(t, n.Quarantined)
		assert.Equal(t, l.Value(), n.Value)
	}

	for _, m := range ms[:3] {
		m.Del("seen")
	}
	in, err = c.Inspect(ctx, "seen")
	require.ErrorIs(t, err, ErrNoHolder)
	assert.Empty(t, in.Value)
	assert.Equal(t, l.Value(), in.Nodes[4].Value)
	assert.Empty(t, in.Nodes[0].Value)
}

func TestDedupeOneServerOneVote(t *testing.T) {
	c := &Client{quorum: 2, nodes: []*node{newNode(nil, "a", true), newNode(nil, "b", true), newNode(nil, "c", true)}}
	as := []answer{{vote: voteYes, server: 0x1a1}, {vote: voteYes, server: 0x1a1}, {vote: voteNo, server: 0x2b2}}
	got := []bool{true, true, true}
	assert.True(t, distinctQuorumDone(c.quorum)(as, got), "2 yes from one server cannot reach quorum 2")
	assert.Equal(t, 1, dedupe(c.nodes, as))
	assert.Equal(t, voteError, as[1].vote)
	assert.Contains(t, as[1].err.Error(), "same server as a")
}

// The default policy doubles its mean delay per failure up to 8 times the
// first, with jitter in [d/2, d*3/2], and never gives up.
func TestDefaultRetryPolicy(t *testing.T) {
	const first = 100 * time.Millisecond
	p := expRetry(first)
	for attempt, mean := range map[int]time.Duration{1: first, 2: 2 * first, 3: 4 * first, 4: 8 * first, 5: 8 * first, 100: 8 * first} {
		for range 200 {
			d, ok := p(attempt)
			require.True(t, ok)
			require.GreaterOrEqual(t, d, mean/2, "attempt %d", attempt)
			require.LessOrEqual(t, d, mean*3/2, "attempt %d", attempt)
		}
	}
}

func TestClosedClient(t *testing.T) {
	_, nodes := testnodes.Minis(t, 3)
	c := newClient(t, unitCfg, nodes)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	_, err := c.TryAcquire(context.Background(), "k", 5*time.Second)
	require.ErrorIs(t, err, ErrClosed)
}

// A node whose configuration check does not answer does not vote: a
// request to a node never checked waits for the check within its own
// deadline, and fails without counting the node. Once the check answers
// (noeviction), the node votes again. In memory, on synctest's clock: the
// 100ms NodeTimeout is exact, whatever the machine's load.
func TestUncheckedNodeDoesNotVote(t *testing.T) {
	synctest.Test(t, checkUncheckedNodeDoesNotVote)
}

func checkUncheckedNodeDoesNotVote(t *testing.T) {
	ctx := context.Background()
	ms, nodes := testnodes.MemMinis(t, 3)
	gate := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(gate) }) }
	ms[0].Server().SetPreHook(func(p *server.Peer, cmd string, args ...string) bool {
		if !strings.EqualFold(cmd, "CONFIG") {
			return false
		}
		<-gate // hangs until opened
		p.WriteLen(2)
		p.WriteBulk("maxmemory-policy")
		p.WriteBulk("noeviction")
		return true
	})
	// Not bootstrapped (New's probe of node 0 waits for the check, and
	// gives up): quarantine off, so that node 0 votes once checked.
	c, err := New(ctx, Config{NodeTimeout: 100 * time.Millisecond, DisableQuarantine: true, Logger: testLogger(t)}, nodes...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	t.Cleanup(open) // first: Close waits for the hung checks

	l, err := c.TryAcquire(ctx, "unchecked", time.Second)
	require.NoError(t, err, "the two other nodes are a majority")
	in, err := c.Inspect(ctx, "unchecked")
	require.NoError(t, err)
	// Its vote is an error: the check's, or NodeTimeout's (both end at the
	// request's deadline).
	require.Error(t, in.Nodes[0].Err)
	assert.Empty(t, in.Nodes[0].Value)
	assert.Empty(t, ms[0].Keys(), "no script reached the unchecked node")
	err = l.Release(ctx)
	require.NoError(t, err)

	open()
	require.Eventually(t, func() bool {
		in, err := c.Inspect(ctx, "unchecked")
		return err != nil && in != nil && in.Nodes[0].Err == nil
	}, 5*time.Second, 5*time.Millisecond, "the node answers again once checked")
	l, err = c.TryAcquire(ctx, "unchecked", time.Second)
	require.NoError(t, err)
	synctest.Wait()
	require.True(t, ms[0].Exists("unchecked"), "the checked node votes")
	err = l.Release(ctx)
	require.NoError(t, err)
}

// TestFailedFenceIsNotFinal: a fence that could not write its token back
// (a node timed out) lists only that attempt's yes-nodes; Acquire must
// retry it, not give up as if a majority had refused for good.
func TestFailedFenceIsNotFinal(t *testing.T) {
	timeout := errNodeTimeout{D: time.Second, NodeTimeout: true}
	fence := &QuorumError{Op: "fence", Key: "k", Need: 2, Yes: 1, target: ErrNotAcquired,
		Nodes: []NodeResult{{Yes: true}, {Err: timeout}}}
	assert.False(t, IsFinal(fence), "%v", fence)
	noperm := &QuorumError{Op: "fence", Key: "k", Need: 2, Yes: 1, target: ErrNotAcquired,
		Nodes: []NodeResult{{Yes: true}, {Err: &rediserr.ReplyError{Code: "NOPERM", Class: rediserr.Permission}}}}
	assert.False(t, IsFinal(noperm), "another attempt may find other yes-nodes: %v", noperm)
	// Before the fix, an error listing fewer nodes than Need was final
	// whatever it held: check an acquire error keeps its meaning.
	short := &QuorumError{Op: "acquire", Key: "k", Need: 2, target: ErrNotAcquired,
		Nodes: []NodeResult{{Err: timeout}}}
	assert.False(t, IsFinal(short), "%v", short)
}

// A QuorumError matches its operation's sentinel, and ErrAccessDenied only
// when refused credentials or permissions left too few nodes for a
// majority (Unwrap); a negative control with one refusal of three.
func TestQuorumErrorAccessDenied(t *testing.T) {
	denied := reply("NOPERM No permissions to access a key")
	two := &QuorumError{Op: "acquire", Key: "k", Need: 2, target: ErrNotAcquired,
		Nodes: []NodeResult{{Err: denied}, {Err: reply("WRONGPASS invalid username-password pair or user is disabled.")}, {Yes: true}}}
	assert.ErrorIs(t, two, ErrNotAcquired)
	assert.ErrorIs(t, two, ErrAccessDenied, "two refusals of three leave no majority")
	one := &QuorumError{Op: "acquire", Key: "k", Need: 2, target: ErrNotAcquired,
		Nodes: []NodeResult{{Err: denied}, {}, {Yes: true}}}
	assert.ErrorIs(t, one, ErrNotAcquired)
	assert.NotErrorIs(t, one, ErrAccessDenied, "one refusal of three: a majority could still answer")
	extend := &QuorumError{Op: "extend", Key: "k", Need: 2, target: errNotExtended, Nodes: []NodeResult{{}, {}, {Yes: true}}}
	assert.NotErrorIs(t, extend, ErrNotHeld, "a failed extend leaves the lock held")
}
