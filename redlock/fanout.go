package redlock

import (
	"context"
	"errors"

	"github.com/redlease/redlease/internal/quorum"
)

// fanout is a Client's fan-out to its nodes (internal/quorum): one request
// to every node at once, each bounded by NodeTimeout (or a call's longer
// wait), collected until the call's rule says the outcome is decided; the
// requests still running then go on in the nodes' workers, counted by the
// Client's WaitGroup (Close waits for them up to closeGrace: see
// close.go), their answers handed to the call's late function.
type fanout = quorum.Fanout[*node, answer]

// errNodeTimeout: a node did not answer within NodeTimeout, or within the
// longer wait of one call.
type errNodeTimeout = quorum.TimeoutError

// inlineNodes is how many nodes the per-call state of an acquisition or a
// fan-out keeps inline (one allocation instead of several).
const inlineNodes = quorum.InlineNodes

// newFanout is c's fan-out: before every call, the placement check and the
// readiness pass that are due; after every answer, settle.
func newFanout(c *Client) *fanout {
	return &fanout{Timeout: c.cfg.NodeTimeout, Wait: &c.wg, Closing: c.closing,
		Before: func() {
			c.placement.Due()
			c.guard.PassIfDue()
		},
		Settle: func(ctx context.Context, n *node, a answer, timedOut errNodeTimeout) answer {
			return settle(ctx, c, n, a, timedOut)
		},
		Missing: func(err error) answer { return answer{vote: voteError, err: err} },
	}
}

// settle records node n's answer a to a request of c's whose caller's
// context is ctx: an error cut by the fan-out's own deadline (wherever the
// request was stuck: queued, on the wire, in a configuration check) is
// said one way, timedOut; an answer marks the node as answering, an error
// as failed (for a cluster's copy, to its placement), reported to Hooks
// unless the caller stopped waiting.
func settle(ctx context.Context, c *Client, n *node, a answer, timedOut errNodeTimeout) answer {
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
