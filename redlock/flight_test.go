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

// The fan-out (fanout.go, flight.go) on its own: nodes without a server,
// whose requests are functions of the test, so that what each node
// answers, and when, is the test's choice.

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
	t.Cleanup(func() { _ = c.Close() })
	return c, c.nodes
}

// votes answers each node's request with the vote of its index.
func votes(vs ...vote) call {
	return func(_ context.Context, n *node) answer { return answer{vote: vs[n.idx]} }
}

func TestFanoutEveryAnswerInNodeOrder(t *testing.T) {
	c, nodes := bareClient(t, 5)
	want := []vote{voteYes, voteNo, voteQuarantined, voteYes, voteNo}
	got := c.fanout(context.Background(), nodes, votes(want...), nil, nil)
	require.Len(t, got, len(want))
	for i, a := range got {
		assert.Equal(t, want[i], a.vote, "node %d", i)
		assert.NoError(t, a.err, "node %d", i)
	}
}

// TestFanoutStopsAtQuorum: once done says so the call returns, the node
// still running is reported as not awaited, and its answer, when it
// comes, goes to late.
func TestFanoutStopsAtQuorum(t *testing.T) {
	c, nodes := bareClient(t, 3)
	release := make(chan struct{})
	do := func(_ context.Context, n *node) answer {
		if n.idx == 2 {
			<-release
		}
		return answer{vote: voteYes}
	}
	late := make(chan int, 1)
	got := c.fanout(context.Background(), nodes, do, quorumDone(2),
		func(n *node, a answer) { late <- n.idx })
	assert.Equal(t, voteYes, got[0].vote)
	assert.Equal(t, voteYes, got[1].vote)
	assert.Equal(t, voteError, got[2].vote)
	assert.ErrorIs(t, got[2].err, ErrNotAwaited)
	close(release)
	assert.Equal(t, 2, <-late, "the straggler's answer goes to late")
}

// TestFanoutQuorumOutOfReach: done also stops the call once the quorum
// cannot be reached any more.
func TestFanoutQuorumOutOfReach(t *testing.T) {
	c, nodes := bareClient(t, 3)
	release := make(chan struct{})
	defer close(release)
	do := func(_ context.Context, n *node) answer {
		if n.idx == 0 {
			<-release
		}
		return answer{vote: voteNo}
	}
	got := c.fanout(context.Background(), nodes, do, quorumDone(2), nil)
	assert.ErrorIs(t, got[0].err, ErrNotAwaited)
	assert.Equal(t, voteNo, got[1].vote)
	assert.Equal(t, voteNo, got[2].vote)
}

// TestFanoutNodeTimeout: a node that does not answer within the wait is
// cut at its deadline, whatever the go-redis client does, and said so.
func TestFanoutNodeTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, nodes := bareClient(t, 3)
		release := make(chan struct{})
		do := func(_ context.Context, n *node) answer {
			if n.idx == 1 {
				<-release // a stalled socket: the context is not honoured
			}
			return answer{vote: voteYes}
		}
		t0 := time.Now()
		got := c.fanoutWithin(context.Background(), 3*time.Second, nodes, do, nil, nil)
		assert.Equal(t, 3*time.Second, time.Since(t0))
		assert.Equal(t, voteYes, got[0].vote)
		assert.Equal(t, voteYes, got[2].vote)
		var timedOut errNodeTimeout
		require.ErrorAs(t, got[1].err, &timedOut)
		assert.Equal(t, "no answer within 3s", got[1].err.Error())

		got = c.fanout(context.Background(), nodes[:1], func(ctx context.Context, _ *node) answer {
			<-ctx.Done()
			return answer{vote: voteError, err: ctx.Err()}
		}, nil, nil)
		assert.Equal(t, "no answer within NodeTimeout ("+c.cfg.NodeTimeout.String()+")", got[0].err.Error(),
			"a request that ends with its deadline is said the same way")
		close(release)
	})
}

// TestFanoutCallerCancels: the caller's cancellation ends the wait, not
// the requests: they go on within their own deadline and their answers
// reach late.
func TestFanoutCallerCancels(t *testing.T) {
	c, nodes := bareClient(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	started, release := make(chan struct{}, 3), make(chan struct{})
	var reqErr = make(chan error, 3)
	do := func(rctx context.Context, n *node) answer {
		started <- struct{}{}
		<-release
		reqErr <- rctx.Err()
		return answer{vote: voteYes}
	}
	late := make(chan vote, 3)
	go func() {
		for range 3 {
			<-started
		}
		cancel()
	}()
	got := c.fanout(ctx, nodes, do, nil, func(_ *node, a answer) { late <- a.vote })
	for i, a := range got {
		assert.ErrorIs(t, a.err, context.Canceled, "node %d", i)
	}
	close(release)
	for range 3 {
		assert.NoError(t, <-reqErr, "a request is not cut by the caller's cancellation")
		assert.Equal(t, voteYes, <-late)
	}
}

// TestFanoutErrorVote: a node's error is its answer, and its event.
func TestFanoutErrorVote(t *testing.T) {
	c, nodes := bareClient(t, 3)
	var seen []Event
	c.cfg.Hooks = func(ev Event) { seen = append(seen, ev) }
	boom := errors.New("boom")
	got := c.fanout(context.Background(), nodes[:1], func(context.Context, *node) answer {
		return answer{vote: voteError, err: boom}
	}, nil, nil)
	assert.ErrorIs(t, got[0].err, boom)
	require.Len(t, seen, 1)
	assert.Equal(t, EventNodeError, seen[0].Kind)
	assert.Equal(t, "node#0", seen[0].Node)
}
