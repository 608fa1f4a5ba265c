package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// status prints the leader's own token whichever node is frozen, when one
// node's counter lags the others' (issue #32: "leader r3 (token 5)" while
// r3 wrote with token 6). The lag is set as the fast path leaves it: the
// node holds the leader's value with its own lower grant.
func TestStatusTokenWithLaggingNode(t *testing.T) {
	ctx := context.Background()
	g, nodes := servers(t, 3)
	direct := g.Clients(t)
	for _, c := range direct {
		require.NoError(t, c.Set(ctx, "status-token:fence", "41", 0).Err())
	}
	client := testClient(t, g, "")
	// Terms of 30s: a node paused for longer than the TTL (a slow CLI run
	// on a loaded host) would lose its copy of the key, and the next pause
	// the term.
	leader := campaignTTL(t, client, "status-token", "cand-1", 30*time.Second)
	require.Equal(t, uint64(42), leader.term(t).Token)
	// Every node must hold the term for the test to mean anything. On a
	// loaded host a node's grant can come after NodeTimeout and the term
	// go on with two copies; that node's copy and counter are then
	// written here as its grant would have left them.
	var value string
	var ttl time.Duration
	for _, c := range direct {
		if v, err := c.Get(ctx, "status-token").Result(); err == nil {
			value, ttl = v, c.PTTL(ctx, "status-token").Val()
			break
		}
	}
	require.NotEmpty(t, value, "no node holds the term")
	for i, c := range direct {
		if c.Get(ctx, "status-token").Val() != value {
			t.Logf("node %d missed the grant: its copy is written here", i)
			require.NoError(t, c.Set(ctx, "status-token", value, ttl).Err())
			require.NoError(t, c.Set(ctx, "status-token:fence", "42", 0).Err())
		}
	}
	require.NoError(t, direct[1].Set(ctx, "status-token:fence", "22", 0).Err())
	for paused := range 3 {
		require.NoError(t, g.Server(paused).Pause())
		code, stdout, stderr := runCLI(t, "status", "--name", "status-token", "--nodes", nodes)
		require.NoError(t, g.Server(paused).Resume())
		require.Equal(t, exitOK, code, stderr)
		assert.Contains(t, stdout, "verdict: leader cand-1 (token 42)", "node %d frozen", paused)
	}
}
