package redlock

import (
	"context"
	"fmt"
	"strconv"
)

// token decides the acquisition's fencing token (docs/design.md §4.5): t
// is the highest counter the yes-nodes replied (each set it by its grant). When a majority of them replied t, a majority holds
// t: it is handed out at once. Otherwise t is written back on the yes-nodes
// below it where our value still holds, and handed out once a majority holds
// it; a counter found above t fails the acquisition (never hand it out).
func (c *Client) token(ctx context.Context, nodes []*node, key, value string, answers []answer) (uint64, error) {
	var t int64
	for _, a := range answers {
		if a.vote == VoteYes {
			t = max(t, a.counter)
		}
	}
	if t <= 0 {
		return 0, fmt.Errorf("no fencing counter in the grants")
	}
	at := 0
	var behind []*node
	for i, a := range answers {
		switch {
		case a.vote != VoteYes:
		case a.counter == t:
			at++
		default:
			behind = append(behind, nodes[i])
		}
	}
	c.sawHigh(t)
	if at >= c.quorum || c.cfg.unsafeOff.FastPathMinority {
		return uint64(t), nil
	}
	need := c.quorum - at
	plain := newCall(scriptFence, []string{key, key + ":fence", markerKey}, value, strconv.FormatInt(t, 10), c.counterTTL())
	res := c.fanout(ctx, behind, func(ctx context.Context, n *node) answer {
		sc := plain
		if n.tag != "" {
			sc = plain.withKeys(n.lockKey(key), n.fenceKey(key), n.marker())
		}
		v, err := intReply(n.run(ctx, sc))
		switch {
		case err != nil:
			return answer{vote: VoteError, err: err}
		case v == 1:
			return answer{vote: VoteYes}
		case v == 0:
			return answer{vote: VoteNo}
		default:
			return answer{vote: VoteError, err: fmt.Errorf("fencing counter is above token %d", t)}
		}
	}, quorumDone(need), nil)
	yes := at
	for _, a := range res {
		if a.vote == VoteYes {
			yes++
		}
	}
	if yes < c.quorum {
		qe := &QuorumError{Op: "fence", Key: key, Need: c.quorum, Yes: yes, target: ErrNotAcquired,
			Reason: fmt.Sprintf("%d nodes held token %d already", at, t)}
		for i, a := range answers {
			if a.vote == VoteYes && a.counter == t {
				qe.Nodes = append(qe.Nodes, nodeResult(nodes[i], a))
			}
		}
		for i, a := range res {
			qe.Nodes = append(qe.Nodes, nodeResult(behind[i], a))
		}
		return 0, qe
	}
	return uint64(t), nil
}
