package quorum

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/redlease/redlease/internal/workers"
)

// The fan-out on its own: nodes without a server, whose requests are
// functions of the test, so that what each node answers, and when, is the
// test's choice.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeNode is a voter with no server behind it.
type fakeNode struct {
	idx  int
	own  bool
	jobs *workers.Pool[Job]
}

func (n *fakeNode) Workers() *workers.Pool[Job] { return n.jobs }
func (n *fakeNode) OwnDeadline() bool           { return n.own }

// reply is a fake answer: a vote, or an error.
type reply struct {
	yes bool
	err error
}

// newFanout is a Fanout over n fake nodes whose Settle records every
// settled answer on settled; NodeTimeout is long, so that no request of a
// loaded machine runs out of time unless a test wants it to. Its workers
// end with the test.
func newFanout(t *testing.T, n int) (*Fanout[*fakeNode, reply], []*fakeNode, *[]reply) {
	t.Helper()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		settled []reply
	)
	closing := make(chan struct{})
	f := &Fanout[*fakeNode, reply]{Timeout: time.Minute, Wait: &wg, Closing: closing,
		Before: func() {},
		Settle: func(_ context.Context, _ *fakeNode, a reply, timedOut TimeoutError) reply {
			if errors.Is(a.err, context.DeadlineExceeded) {
				a.err = timedOut
			}
			mu.Lock()
			settled = append(settled, a)
			mu.Unlock()
			return a
		},
		Missing: func(err error) reply { return reply{err: err} }}
	nodes := make([]*fakeNode, n)
	for i := range nodes {
		nodes[i] = &fakeNode{idx: i, jobs: workers.New[Job]()}
	}
	t.Cleanup(func() { close(closing); wg.Wait() })
	return f, nodes, &settled
}

// majority is a Done: need yes, or need out of reach.
func majority(need int) Done[reply] {
	return func(as []reply, got []bool) bool {
		yes, open := 0, 0
		for i, a := range as {
			switch {
			case !got[i]:
				open++
			case a.yes:
				yes++
			}
		}
		return yes >= need || yes+open < need
	}
}

func TestFanoutEveryAnswerInNodeOrder(t *testing.T) {
	f, nodes, settled := newFanout(t, 5)
	want := []bool{true, false, false, true, false}
	got := f.Run(context.Background(), nodes, func(_ context.Context, n *fakeNode) reply { return reply{yes: want[n.idx]} }, nil, nil)
	require.Len(t, got, len(want))
	for i, a := range got {
		assert.Equal(t, want[i], a.yes, "node %d", i)
		assert.NoError(t, a.err, "node %d", i)
	}
	assert.Len(t, *settled, len(want), "every answer is settled")
}

// TestFanoutStopsAtQuorum: once done says so the call returns, the node
// still running is reported as not awaited, and its answer, when it
// comes, goes to late.
func TestFanoutStopsAtQuorum(t *testing.T) {
	f, nodes, _ := newFanout(t, 3)
	release := make(chan struct{})
	do := func(_ context.Context, n *fakeNode) reply {
		if n.idx == 2 {
			<-release
		}
		return reply{yes: true}
	}
	late := make(chan int, 1)
	got := f.Run(context.Background(), nodes, do, majority(2), func(n *fakeNode, _ reply) { late <- n.idx })
	assert.True(t, got[0].yes)
	assert.True(t, got[1].yes)
	assert.ErrorIs(t, got[2].err, ErrNotAwaited)
	close(release)
	assert.Equal(t, 2, <-late, "the straggler's answer goes to late")
}

// TestFanoutQuorumOutOfReach: done also stops the call once the quorum
// cannot be reached any more.
func TestFanoutQuorumOutOfReach(t *testing.T) {
	f, nodes, _ := newFanout(t, 3)
	release := make(chan struct{})
	defer close(release)
	do := func(_ context.Context, n *fakeNode) reply {
		if n.idx == 0 {
			<-release
		}
		return reply{}
	}
	got := f.Run(context.Background(), nodes, do, majority(2), nil)
	assert.ErrorIs(t, got[0].err, ErrNotAwaited)
	assert.NoError(t, got[1].err)
	assert.NoError(t, got[2].err)
}

// TestFanoutNodeTimeout: a node that does not answer within the wait is
// cut at its deadline, whatever its client does, and said so.
func TestFanoutNodeTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, nodes, _ := newFanout(t, 3)
		release := make(chan struct{})
		do := func(_ context.Context, n *fakeNode) reply {
			if n.idx == 1 {
				<-release // a stalled socket: the context is not honoured
			}
			return reply{yes: true}
		}
		t0 := time.Now()
		got := f.RunWithin(context.Background(), 3*time.Second, nodes, do, nil, nil)
		assert.Equal(t, 3*time.Second, time.Since(t0))
		assert.True(t, got[0].yes)
		assert.True(t, got[2].yes)
		var timedOut TimeoutError
		require.ErrorAs(t, got[1].err, &timedOut)
		assert.Equal(t, "no answer within 3s", got[1].err.Error())

		got = f.Run(context.Background(), nodes[:1], func(ctx context.Context, _ *fakeNode) reply {
			<-ctx.Done()
			return reply{err: ctx.Err()}
		}, nil, nil)
		assert.Equal(t, "no answer within NodeTimeout (1m0s)", got[0].err.Error(),
			"a request that ends with its deadline is said the same way")
		close(release)
	})
}

// TestFanoutDirect: a node alone whose client cuts its own requests runs
// in the caller's goroutine, bounded by the wait, and is settled.
func TestFanoutDirect(t *testing.T) {
	f, nodes, settled := newFanout(t, 1)
	nodes[0].own = true
	got := f.RunWithin(context.Background(), time.Millisecond, nodes, func(ctx context.Context, _ *fakeNode) reply {
		<-ctx.Done()
		return reply{err: ctx.Err()}
	}, nil, nil)
	assert.Equal(t, "no answer within 1ms", got[0].err.Error())
	assert.Len(t, *settled, 1)
}

// TestFanoutCallerCancels: the caller's cancellation ends the wait, not
// the requests: they go on within their own deadline and their answers
// reach late.
func TestFanoutCallerCancels(t *testing.T) {
	f, nodes, _ := newFanout(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	started, release := make(chan struct{}, 3), make(chan struct{})
	reqErr := make(chan error, 3)
	do := func(rctx context.Context, _ *fakeNode) reply {
		started <- struct{}{}
		<-release
		reqErr <- rctx.Err()
		return reply{yes: true}
	}
	late := make(chan bool, 3)
	go func() {
		for range 3 {
			<-started
		}
		cancel()
	}()
	got := f.Run(ctx, nodes, do, nil, func(_ *fakeNode, a reply) { late <- a.yes })
	for i, a := range got {
		assert.ErrorIs(t, a.err, context.Canceled, "node %d", i)
	}
	close(release)
	for range 3 {
		assert.NoError(t, <-reqErr, "a request is not cut by the caller's cancellation")
		assert.True(t, <-late)
	}
}
