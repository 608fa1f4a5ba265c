package redlock

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redlease/redlease/internal/scripts"
)

// fenceStep decides the fencing token of one acquisition (docs/design.md
// §4.5), given the answers of a quorum of grants: t is the highest counter
// the yes-nodes replied (each set it by its grant). When a majority of them replied t, a majority holds t: it is
// handed out at once. Otherwise t is written back on the yes-nodes below
// it where our value still holds, and handed out once a majority holds it;
// a counter found above t fails the acquisition (never hand it out).
type fenceStep struct {
	c          *Client
	nodes      []*node
	answers    []answer // the acquisition's: answers[i] is nodes[i]'s
	key, value string

	t      int64   // the highest counter of the yes-nodes
	at     int     // how many yes-nodes replied t
	behind []*node // the yes-nodes below t
}

// newFenceStep tallies the grants among answers.
func newFenceStep(c *Client, nodes []*node, key, value string, answers []answer) fenceStep {
	f := fenceStep{c: c, nodes: nodes, answers: answers, key: key, value: value}
	for _, a := range answers {
		if a.vote == voteYes {
			f.t = max(f.t, a.counter)
		}
	}
	for i, a := range answers {
		switch {
		case a.vote != voteYes:
		case a.counter == f.t:
			f.at++
		default:
			f.behind = append(f.behind, nodes[i])
		}
	}
	return f
}

// token returns the acquisition's token, writing it back first where a
// majority does not hold it yet; an error fails the acquisition.
func (f *fenceStep) token(ctx context.Context) (uint64, error) {
	if f.t <= 0 {
		return 0, fmt.Errorf("no fencing counter in the grants")
	}
	c := f.c
	c.guard.Ready.SawHigh(f.t)
	if f.at >= c.quorum || c.cfg.unsafeOff.fastPathMinority() {
		return uint64(f.t), nil
	}
	res := f.writeBack(ctx)
	yes := f.at
	for _, a := range res {
		if a.vote == voteYes {
			yes++
		}
	}
	if yes < c.quorum {
		return 0, f.failed(yes, res)
	}
	return uint64(f.t), nil
}

// writeBack runs fence.lua on the nodes behind, until enough of them
// hold t to make a majority with those that replied it.
func (f *fenceStep) writeBack(ctx context.Context) []answer {
	key, t := f.key, f.t // the requests may outlive the step: f stays on the stack
	plain := scripts.NewCall(scripts.Fence, []string{key, key + ":fence", markerKey}, f.value, strconv.FormatInt(t, 10), f.c.args.counterTTL)
	return f.c.fan.Run(ctx, f.behind, func(ctx context.Context, n *node) answer {
		sc := plain
		if n.tag != "" {
			sc = plain.WithKeys(n.lockKey(key), n.fenceKey(key), n.marker())
		}
		v, err := intReply(n.run(ctx, sc))
		return fenceAnswer(v, err, t)
	}, quorumDone(f.c.quorum-f.at), nil)
}

// fenceAnswer reads fence.lua's reply v (or err) to a write-back of t.
func fenceAnswer(v int64, err error, t int64) answer {
	return yesNo(v, err, func(int64) error { return fmt.Errorf("fencing counter is above token %d", t) })
}

// yesNo reads a script's reply v (or err) that is 1 (yes) or 0 (no); any
// other value is the error other(v).
func yesNo(v int64, err error, other func(v int64) error) answer {
	switch {
	case err != nil:
		return answer{vote: voteError, err: err}
	case v == 1:
		return answer{vote: voteYes}
	case v == 0:
		return answer{vote: voteNo}
	default:
		return answer{vote: voteError, err: other(v)}
	}
}

// failed is the error of a write-back that left t short of a majority
// (yes nodes): every node that holds t, then every write-back's answer.
func (f *fenceStep) failed(yes int, res []answer) *QuorumError {
	qe := &QuorumError{Op: "fence", Key: f.key, Need: f.c.quorum, Yes: yes, target: ErrNotAcquired,
		Reason: fmt.Sprintf("%d nodes held token %d already", f.at, f.t)}
	for i, a := range f.answers {
		if a.vote == voteYes && a.counter == f.t {
			qe.Nodes = append(qe.Nodes, nodeResult(f.nodes[i], a))
		}
	}
	for i, a := range res {
		qe.Nodes = append(qe.Nodes, nodeResult(f.behind[i], a))
	}
	return qe
}
