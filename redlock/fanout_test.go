package redlock

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Client's side of the fan-out (fanout.go: settle); the fan-out
// itself is tested in internal/quorum. Nodes without a server, whose
// requests are functions of the test.

// bareClient is a Client over n nodes that have no server behind them,
// for the parts of the client that never send a request themselves. The
// quarantine is off so that no readiness pass starts; NodeTimeout is long,
// so that no request of a loaded machine runs out of time unless a test
// wants it to.
func bareClient(t *testing.T, n int) (*Client, []*node) {
	t.Helper()
	cfg := Config{DisableQuarantine: true, NodeTimeout: time.Minute, Logger: testLogger(t)}.withDefaults()
	c := &Client{cfg: cfg, log: cfg.Logger, quorum: n/2 + 1, closing: make(chan struct{})}
	for i := range n {
		nd := newNode(nil, fmt.Sprintf("node#%d", i), true)
		nd.idx = i
		c.nodes = append(c.nodes, nd)
	}
	c.sets, c.all = [][]*node{c.nodes}, c.nodes
	c.fan = newFanout(c)
	t.Cleanup(func() { _ = c.Close() })
	return c, c.nodes
}

// TestFanoutDeadlineSaid: a request that ends with the fan-out's own
// deadline is said as a NodeTimeout, not as the context's error.
func TestFanoutDeadlineSaid(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, nodes := bareClient(t, 3)
		got := c.fan.Run(context.Background(), nodes[:1], func(ctx context.Context, _ *node) answer {
			<-ctx.Done()
			return answer{vote: voteError, err: ctx.Err()}
		}, nil, nil)
		var timedOut errNodeTimeout
		require.ErrorAs(t, got[0].err, &timedOut)
		assert.Equal(t, "no answer within NodeTimeout ("+c.cfg.NodeTimeout.String()+")", got[0].err.Error())
	})
}

// TestFanoutErrorVote: a node's error is its answer, and its event.
func TestFanoutErrorVote(t *testing.T) {
	c, nodes := bareClient(t, 3)
	var seen []Event
	c.cfg.Hooks = func(ev Event) { seen = append(seen, ev) }
	boom := errors.New("boom")
	got := c.fan.Run(context.Background(), nodes[:1], func(context.Context, *node) answer {
		return answer{vote: voteError, err: boom}
	}, nil, nil)
	assert.ErrorIs(t, got[0].err, boom)
	require.Len(t, seen, 1)
	assert.Equal(t, EventNodeError, seen[0].Kind)
	assert.Equal(t, "node#0", seen[0].Node)
}
