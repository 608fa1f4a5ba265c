package redlock

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/redistest"
)

// closeBound is what the tests below allow Close with one node silent: a
// few times closeGrace, where it used to take the go-redis clients'
// socket timeouts, twice over (~10s with go-redis's defaults).
const closeBound = 3 * time.Second

// TestCloseDoesNotWaitForASilentNode: with one node that accepts and never
// answers (a paused server, or a listener that never replies) and a lock
// released while its acquire request to that node is still stuck, Close
// returns within closeBound. A Client made by Dial closes its go-redis
// clients, so nothing of it runs once Close returned; one made by New
// leaves its stuck requests to the caller's clients, and they end, their
// late answers handled as before, as soon as the node answers or the
// caller closes those clients.
func TestCloseDoesNotWaitForASilentNode(t *testing.T) {
	if testing.Short() {
		t.Skip("real redis-servers: not in -short")
	}
	for _, kind := range []string{"sigstop", "accept-only"} {
		for _, made := range []string{"New", "Dial"} {
			t.Run(kind+"/"+made, func(t *testing.T) {
				closeSilent(t, kind, made)
			})
		}
	}
}

func closeSilent(t *testing.T, kind, made string) {
	rig := redistest.StartRig(t, 3, redistest.RigOptions{
		Proxied: 1,
		Node: func(_ int, addr string) *redis.Options {
			// A read timeout that outlasts the test: only Close may end
			// a request stuck on the silent node.
			return &redis.Options{Addr: addr, Protocol: 2, ReadTimeout: 20 * time.Second}
		},
	})
	before := goroutineIDs()
	c := closeClient(t, rig, made)
	// Cleanups run last first: the node speaks again before the rig stops.
	t.Cleanup(func() {
		rig.Heal()
		rig.Proxies[0].ResetAll()
	})
	silence(t, rig, kind)

	ctx := context.Background()
	key := "close/" + kind + "/" + made
	l, err := c.Acquire(ctx, key, 10*time.Second)
	require.NoError(t, err, "a majority answers")
	require.NoError(t, l.Release(ctx), "a majority answers")

	t0 := time.Now()
	require.NoError(t, c.Close())
	took := time.Since(t0)
	t.Logf("Close took %s with node 0 silent (grace %s)", took, closeGrace(c.cfg.NodeTimeout))
	assert.Less(t, took, closeBound, "Close with one node silent")

	if made == "Dial" {
		// Ended, or about to: a goroutine that said it is done (the
		// WaitGroup's Done, in its defer) may not have exited yet. Those
		// stuck on node 0 would run on for the read timeout (20s).
		require.Eventually(t, func() bool { return len(leftBy(before)) == 0 }, time.Second, time.Millisecond,
			"a Dial Client's goroutines once Close returned: %v", leftBy(before))
		return
	}
	if kind == "sigstop" {
		// The stuck acquire request is still the Client's: the server
		// continues, grants it, and the straggler releases its copy.
		require.NoError(t, rig.Server(0).Resume())
	} else {
		for _, n := range rig.Nodes {
			require.NoError(t, n.Close()) // the caller closes its clients after Close
		}
	}
	require.Eventually(t, func() bool { return len(leftBy(before)) == 0 }, 10*time.Second, 5*time.Millisecond,
		"the Client's goroutines end once the node answers or its go-redis client is closed: %v", leftBy(before))
	if kind == "sigstop" {
		assert.Equal(t, "", rig.Values(key, 0)[0], "the late grant on node 0 is released")
	}
}

// TestCloseDoesNotWaitForASubscriptionOnASilentNode: a notice
// subscription (a lease's, an observer's) whose connection set-up is stuck
// on a silent node does not hold Close either, though closing the go-redis
// client does not cut a set-up: the goroutine ends at the go-redis
// client's socket timeouts (go-redis's defaults here, as Dial makes them).
func TestCloseDoesNotWaitForASubscriptionOnASilentNode(t *testing.T) {
	if testing.Short() {
		t.Skip("real redis-servers: not in -short")
	}
	for _, kind := range []string{"sigstop", "accept-only"} {
		t.Run(kind, func(t *testing.T) {
			rig := redistest.StartRig(t, 3, redistest.RigOptions{Proxied: 1})
			before := goroutineIDs()
			c := closeClient(t, rig, "Dial")
			t.Cleanup(func() {
				rig.Heal()
				rig.Proxies[0].ResetAll()
			})
			silence(t, rig, kind)

			sub, err := c.subscribe(context.Background(), "close/notices")
			require.NoError(t, err, "a majority subscribed")
			require.NoError(t, sub.Close())
			t0 := time.Now()
			require.NoError(t, c.Close())
			took := time.Since(t0)
			t.Logf("Close took %s with a subscription stuck on node 0 (grace %s)", took, closeGrace(c.cfg.NodeTimeout))
			assert.Less(t, took, closeBound, "Close with a subscription stuck on a silent node")
			require.Eventually(t, func() bool { return len(leftBy(before)) == 0 }, 20*time.Second, 10*time.Millisecond,
				"the subscription's goroutine ends at go-redis's socket timeouts: %v", leftBy(before))
		})
	}
}

// closeClient makes a bootstrapped Client over rig's nodes with New, or
// with Dial on their addresses, closed on cleanup.
func closeClient(t *testing.T, rig *redistest.Rig, made string) *Client {
	cfg := Config{NodeTimeout: 200 * time.Millisecond, Logger: testLogger(t)}
	var c *Client
	var err error
	if made == "Dial" {
		var addrs []string
		for _, n := range rig.Nodes {
			addrs = append(addrs, n.(*redis.Client).Options().Addr)
		}
		c, err = Dial(context.Background(), cfg, addrs, DialOptions{})
	} else {
		c, err = New(context.Background(), cfg, rig.Nodes...)
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.Bootstrap(context.Background()))
	return c
}

// silence makes node 0 of rig accept connections and never answer.
func silence(t *testing.T, rig *redistest.Rig, kind string) {
	switch kind {
	case "sigstop":
		require.NoError(t, rig.Server(0).Pause())
	case "accept-only":
		rig.Proxies[0].Partition() // accepts, never answers
		rig.Proxies[0].ResetAll()  // no pooled connection answers either
	}
}

// goroutineIDs are the goroutines running now, each by its header line
// ("goroutine 42").
func goroutineIDs() map[string]bool {
	ids := map[string]bool{}
	for _, g := range goroutines() {
		ids[strings.SplitN(g, " [", 2)[0]] = true
	}
	return ids
}

// leftBy lists the goroutines started by redlock that are not in before.
func leftBy(before map[string]bool) []string {
	var out []string
	for _, g := range goroutines() {
		id := strings.SplitN(g, " [", 2)[0]
		if !before[id] && strings.Contains(g, "created by github.com/redlease/redlease/redlock.") {
			out = append(out, fmt.Sprintf("%.300s", g))
		}
	}
	return out
}

func goroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Split(string(buf[:n]), "\n\n")
		}
		buf = make([]byte, 2*len(buf))
	}
}
