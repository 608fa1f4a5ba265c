// Package quorum sends one request to every voter of a set at once and
// collects their answers (docs/design.md §4.1): the fan-out under every
// call of a redlock.Client. A [Fanout] runs each node's request in the
// node's worker goroutines (internal/workers), bounds every request of a
// round by one deadline, returns as soon as the caller's rule says the
// outcome is decided, and hands the answers of the requests still running
// then (the stragglers) to the caller's late function. What a request is,
// what its answer means and when a round is decided are the caller's: the
// package is generic over the node type N and the answer type A, and
// imports nothing of redlock.
package quorum

import (
	"context"
	"sync"
	"time"

	"github.com/redlease/redlease/internal/workers"
)

// Node is what a fan-out needs of a voter.
type Node interface {
	// Workers is the pool that runs the node's requests.
	Workers() *workers.Pool[Job]
	// OwnDeadline reports that the node's client cuts its requests at the
	// context's deadline itself, so that a round of that node alone may
	// run its request in the caller's goroutine.
	OwnDeadline() bool
}

// Fanout is the fan-out of one client: how long a request may take, who
// counts the requests in flight, and what the client does with every
// answer. Fill in every field; a Fanout is safe for concurrent use once
// filled in and must not be changed then.
type Fanout[N Node, A any] struct {
	// Timeout bounds every request of a round (the client's NodeTimeout)
	// unless the round asks for a longer wait.
	Timeout time.Duration
	// Wait counts every request in flight and every worker goroutine, so
	// that the client's Close can wait for them.
	Wait *sync.WaitGroup
	// Closing is closed when the client closes: idle workers exit.
	Closing <-chan struct{}
	// Before runs before every round, in the caller's goroutine (the
	// client's checks that may be due).
	Before func()
	// Settle records node n's answer a to a request of a round whose
	// caller's context is ctx, and returns the answer to report; an error
	// cut by the round's own deadline should be said as timedOut.
	Settle func(ctx context.Context, n N, a A, timedOut TimeoutError) A
	// Missing is the answer of a node that gave none, saying why.
	Missing func(err error) A
}

// Done says, after every answer, whether a round is decided: answers[i]
// belongs to the round's node i, got[i] says whether it answered yet.
type Done[A any] func(answers []A, got []bool) bool

// Run sends do to every node at once and collects the answers, each
// request bounded by Timeout; see [Fanout.RunWithin].
func (f *Fanout[N, A]) Run(ctx context.Context, nodes []N, do func(context.Context, N) A, done Done[A], late func(N, A)) []A {
	return f.RunWithin(ctx, 0, nodes, do, done, late)
}

// RunWithin sends do to every node at once and collects the answers:
// answers[i] belongs to nodes[i].
//
// Every request shares one context bounded by wait (Timeout when wait is
// not above 0), and the wait is cut at that deadline here rather than
// trusted to the node's client (go-redis does not cut socket reads on a
// context deadline unless built with ContextTimeoutEnabled). done (nil:
// wait for every node) is consulted after every answer; RunWithin returns
// as soon as it says true, when every node answered, at the deadline, or
// when ctx ends. Nodes that had not answered by then get the Missing
// answer saying why: [ErrNotAwaited], ctx's error, or a [TimeoutError].
//
// Requests still running when RunWithin returns go on within the same
// deadline, not cut by ctx's cancellation (a grant is not lost half-way),
// in goroutines Wait counts; their answers go to late, if not nil, which
// runs in that goroutine.
func (f *Fanout[N, A]) RunWithin(ctx context.Context, wait time.Duration, nodes []N, do func(context.Context, N) A, done Done[A], late func(N, A)) []A {
	if wait <= 0 {
		wait = f.Timeout
	}
	f.Before()
	timedOut := TimeoutError{D: wait, NodeTimeout: wait == f.Timeout}
	if len(nodes) == 1 && nodes[0].OwnDeadline() {
		nctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		return []A{f.Settle(ctx, nodes[0], do(nctx, nodes[0]), timedOut)}
	}
	// The requests are bounded by wait alone, not cut by the caller's
	// cancellation: a caller that stops waiting (or cancels its context as
	// soon as the call returned) leaves its stragglers to finish, so that a
	// node's grant is not lost half-way (its fencing counter would fall
	// behind the others') and its answer reaches late. The last request to
	// finish releases the context.
	rctx := ctx
	if ctx.Done() != nil {
		rctx = context.WithoutCancel(ctx)
	}
	nctx, cancel := context.WithTimeout(rctx, wait)
	r := &round[N, A]{f: f, ctx: ctx, nctx: nctx, cancel: cancel, do: do, late: late, timedOut: timedOut,
		nodes: nodes, ch: make(chan indexed[A], len(nodes))}
	r.running.Store(int32(len(nodes)))
	f.Wait.Add(len(nodes))
	for i, n := range nodes {
		n.Workers().Dispatch(Job{r, i}, f.Wait, f.Closing)
	}
	return r.collect(done)
}
