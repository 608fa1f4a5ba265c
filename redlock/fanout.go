package redlock

import (
	"context"
	"errors"
	"time"

	"github.com/redlease/redlease/internal/logx"
)

// call is one request to one node; it returns the node's parsed answer.
type call func(ctx context.Context, n *node) answer

// fanout sends call to the given nodes at once and collects the answers.
//
// Every request of one fanout shares one context bounded by NodeTimeout
// (or by wait, when positive: see Lock.wait), and
// the wait is cut at that deadline here rather than trusted to the go-redis
// client (which does not cut socket reads on a context deadline unless
// built with ContextTimeoutEnabled). done is consulted after every answer;
// fanout returns as soon as it says true, when every node answered, when
// NodeTimeout passed, or when ctx ends. Nodes that had not answered by then
// are reported as voteError saying why.
//
// Requests still running when fanout returns go on, within the same
// deadline, in goroutines tracked by the client (Close waits for them up
// to closeGrace: see close.go);
// their answers go to late, if not nil, which runs in that goroutine.
// answers[i] belongs to nodes[i].
func (c *Client) fanout(ctx context.Context, nodes []*node, do call, done func(answers []answer, got []bool) bool, late func(n *node, a answer)) (answers []answer) {
	return c.fanoutWithin(ctx, 0, nodes, do, done, late)
}

// fanoutWithin is fanout with every request bounded by wait instead of
// NodeTimeout when wait > 0.
func (c *Client) fanoutWithin(ctx context.Context, wait time.Duration, nodes []*node, do call, done func(answers []answer, got []bool) bool, late func(n *node, a answer)) (answers []answer) {
	if wait <= 0 {
		wait = c.cfg.NodeTimeout
	}
	c.placement.Due()
	c.guard.PassIfDue()
	timedOut := errNodeTimeout{wait, wait == c.cfg.NodeTimeout}
	if len(nodes) == 1 && nodes[0].ownDeadline {
		nctx, cancel := deadline(ctx, wait)
		return []answer{c.direct(ctx, nctx, cancel, nodes[0], do, timedOut)}
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
	nctx, cancel := deadline(rctx, wait)
	f := &flight{c: c, ctx: ctx, nctx: nctx, cancel: cancel, do: do, late: late, timedOut: timedOut,
		nodes: nodes, ch: make(chan indexed, len(nodes))}
	f.running.Store(int32(len(nodes)))
	c.wg.Add(len(nodes))
	for i, n := range nodes {
		n.jobs.Dispatch(job{f, i}, &c.wg, c.closing)
	}
	return f.collect(done)
}

// direct is the fan-out of a single node whose go-redis client cuts its
// requests at the context's deadline itself: the request runs in the
// caller's goroutine, with no channel and no goroutine, and cannot outlive
// the deadline, so it has no late answer.
func (c *Client) direct(ctx, nctx context.Context, cancel context.CancelFunc, n *node, do call, timedOut errNodeTimeout) answer {
	defer cancel()
	return c.settle(ctx, n, do(nctx, n), timedOut)
}

// settle records node n's answer a to a request of a call whose caller's
// context is ctx: an error cut by the fan-out's own deadline (wherever the
// request was stuck: queued, on the wire, in a configuration check) is
// said one way, timedOut; an answer marks the node as answering, an error
// as failed, reported to Hooks unless the caller stopped waiting.
func (c *Client) settle(ctx context.Context, n *node, a answer, timedOut errNodeTimeout) answer {
	if a.vote == voteError && errors.Is(a.err, context.DeadlineExceeded) && ctx.Err() == nil {
		a.err = timedOut
	}
	if a.vote != voteError {
		n.heard.Answered()
	} else {
		if n.cluster != nil {
			c.placement.Failed(n.cluster, a.err)
		}
		if ctx.Err() == nil {
			c.observe(Event{Kind: EventNodeError, Node: n.addr, Err: a.err})
		}
	}
	return a
}

// deadline is context.WithTimeout for a context whose cancel is called by
// the last of several goroutines rather than by its creator.
func deadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

// errNodeTimeout: a node did not answer within NodeTimeout, or within the
// longer wait of one call.
type errNodeTimeout struct {
	d           time.Duration
	nodeTimeout bool // d is Config.NodeTimeout
}

func (e errNodeTimeout) Error() string {
	d := logx.RoundDuration(e.d).String() // a call's wait may be a fraction: 114.833333ms
	if e.nodeTimeout {
		return "no answer within NodeTimeout (" + d + ")"
	}
	return "no answer within " + d
}
func (e errNodeTimeout) Timeout() bool   { return true }
func (e errNodeTimeout) Temporary() bool { return true }

// quorumDone returns a done func for fanout that stops as soon as need yes
// votes arrived, or as soon as need can no longer be reached.
func quorumDone(need int) func([]answer, []bool) bool {
	return func(as []answer, got []bool) bool {
		yes, open := 0, 0
		for i, a := range as {
			switch {
			case !got[i]:
				open++
			case a.vote == voteYes:
				yes++
			}
		}
		return yes >= need || yes+open < need
	}
}
