package redlock

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// call is one request to one node; it returns the node's parsed answer.
type call func(ctx context.Context, n *node) answer

// fanout sends call to the given nodes at once and collects the answers.
//
// Every request of one fanout shares one context bounded by NodeTimeout
// (or by wait, when positive: see [WithExtendTimeout]), and
// the wait is cut at that deadline here rather than trusted to the go-redis
// client (which does not cut socket reads on a context deadline unless
// built with ContextTimeoutEnabled). done is consulted after every answer;
// fanout returns as soon as it says true, when every node answered, when
// NodeTimeout passed, or when ctx ends. Nodes that had not answered by then
// are reported as VoteError saying why.
//
// Requests still running when fanout returns go on, within the same
// deadline, in goroutines tracked by the client (Close waits for them);
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
	type indexed struct {
		i int
		a answer
	}
	var (
		mu      sync.Mutex
		closed  bool
		ch      = make(chan indexed, len(nodes))
		running atomic.Int32
	)
	// The last request to finish releases the context; until then it
	// lives to its deadline, so stragglers are not cut short by our return.
	nctx, cancel := deadline(ctx, wait)
	timedOut := errNodeTimeout{wait, wait == c.cfg.NodeTimeout}
	running.Store(int32(len(nodes)))
	for i, n := range nodes {
		c.wg.Go(func() {
			a := do(nctx, n)
			if a.vote == VoteError && errors.Is(a.err, context.DeadlineExceeded) && ctx.Err() == nil {
				// Cut by the fan-out's own deadline, wherever it was stuck
				// (queued, on the wire, in a configuration check): say so
				// in one way.
				a.err = timedOut
			}
			if a.vote == VoteError {
				c.nodeFailed(n, a.err)
			}
			mu.Lock()
			sent := !closed
			if sent {
				ch <- indexed{i, a} // buffered: never blocks
			}
			mu.Unlock()
			if running.Add(-1) == 0 {
				cancel()
			}
			if !sent && late != nil {
				late(n, a)
			}
		})
	}

	answers = make([]answer, len(nodes))
	got := make([]bool, len(nodes))
	pending := len(nodes)
	take := func(r indexed) bool {
		answers[r.i], got[r.i] = r.a, true
		pending--
		return done != nil && done(answers, got)
	}
	var cut error // why the nodes still pending get no answer
collect:
	for pending > 0 {
		select {
		case r := <-ch:
			if take(r) {
				cut = errNotAwaited
				break collect
			}
		case <-nctx.Done():
			// Answers may have arrived together with the deadline.
			for drained := false; !drained && pending > 0; {
				select {
				case r := <-ch:
					if take(r) {
						cut = errNotAwaited
						break collect
					}
				default:
					drained = true
				}
			}
			if cut = ctx.Err(); cut == nil {
				cut = timedOut
			}
			break collect
		}
	}

	mu.Lock()
	closed = true
	mu.Unlock()
	// Answers that arrived after the last look are late too.
	for drained := false; !drained; {
		select {
		case r := <-ch:
			if late != nil {
				c.wg.Go(func() { late(nodes[r.i], r.a) })
			}
		default:
			drained = true
		}
	}
	for i := range answers {
		if !got[i] {
			answers[i] = answer{vote: VoteError, err: cut}
		}
	}
	return answers
}

// deadline is context.WithTimeout for a context whose cancel is called by
// the last of several goroutines rather than by its creator.
func deadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

// errNotAwaited: the request was still running when the outcome was
// already decided by the other nodes' answers.
var errNotAwaited = errors.New("not awaited: the outcome was decided without this node")

// errNodeTimeout: a node did not answer within NodeTimeout, or within the
// longer wait of one call.
type errNodeTimeout struct {
	d           time.Duration
	nodeTimeout bool // d is Config.NodeTimeout
}

func (e errNodeTimeout) Error() string {
	if e.nodeTimeout {
		return "no answer within NodeTimeout (" + e.d.String() + ")"
	}
	return "no answer within " + e.d.String()
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
			case a.vote == VoteYes:
				yes++
			}
		}
		return yes >= need || yes+open < need
	}
}
