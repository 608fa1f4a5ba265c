package redlock

import (
	"context"
	"fmt"
	"time"

	"github.com/redlease/redlease/internal/scripts"
)

// Inspection is a majority read of a key (see [Client.Inspect]): the
// holder found on a majority, and every node's view.
type Inspection struct {
	// Holder is the holder found on a majority of nodes: the zero Holder
	// but for its Key when there is none.
	Holder
	// Nodes has every node's view, in the order given to New: its
	// Value, TTL and Counter for the key, and whether it votes.
	Nodes []NodeResult
}

// Inspect reads the key on every node and reports the holder found on a
// majority, if any, with every node's view. When no value is held by a
// majority (free, expiring, contended, or too many nodes unreachable or
// quarantined) it returns the Inspection (its Holder zero but for the Key)
// and an error matching [ErrNoHolder]. When ctx ends before a majority
// answered, the error matches ctx's error instead (the Inspection has what
// the nodes said). Other errors (a closed client, a bad key) come with a
// nil Inspection.
// Inspect writes nothing itself; a node it finds quarantined (see
// [NodeResult.Quarantined]) makes the Client start a readiness pass in the
// background, which starts the quarantine of a node that has no marker and
// raises fencing floors.
func (c *Client) Inspect(ctx context.Context, key string) (*Inspection, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.mu.RUnlock()
	t0 := time.Now()
	args := []any{c.args.maxTTL, c.args.mode, c.args.layout}
	nodes := c.sets.forKey(key)
	answers := c.fan.Run(ctx, nodes, func(ctx context.Context, n *node) answer {
		return inspectOn(ctx, c, n, key, args)
	}, nil, nil)
	elapsed := time.Since(t0)
	c.guard.PassIfDue() // what this read saw may call for a pass now
	in, err := inspection(key, nodes, answers, c.quorum, elapsed, c.cfg.drift)
	if err == nil {
		in.Expires = expires(holderTTLs(in.Value, in.Nodes), len(nodes), c.quorum, t0)
	}
	if cerr := ctx.Err(); cerr != nil && err != nil {
		// Cut short by the caller: the nodes did not say "no holder".
		return in, fmt.Errorf("redlock: inspect %q: read cut short: %w", key, cerr)
	}
	return in, err
}

// holderTTLs is the TTLs of the nodes that answered with value.
func holderTTLs(value string, states []NodeResult) []time.Duration {
	var ttls []time.Duration
	for _, st := range states {
		if st.Err == nil && st.Value == value {
			ttls = append(ttls, st.TTL)
		}
	}
	return ttls
}

// inspectOn is an Inspect's request of c's to node n: inspect.lua, its
// reply read, what it says of the node's quarantine noted.
func inspectOn(ctx context.Context, c *Client, n *node, key string, args []any) answer {
	if err := c.check.Admit(ctx, n); err != nil {
		return answer{vote: voteError, err: err}
	}
	res, err := n.run(ctx, scripts.NewCall(scripts.Inspect, []string{n.lockKey(key), n.fenceKey(key), n.marker()}, args...))
	if err != nil {
		return answer{vote: voteError, err: err}
	}
	a, err := replyArray(res, 5)
	if err != nil {
		return answer{vote: voteError, err: err}
	}
	ns, err := asInts(a, 1, 2, 3, 4)
	if _, isStr := a[0].(string); err != nil || !isStr {
		return answer{vote: voteError, err: badReply(res)}
	}
	v := voteYes
	if ns[2] > 0 || ns[3] != 1 {
		v = voteQuarantined
		c.guard.Ready.SawQuarantine(time.Duration(ns[2])*time.Millisecond, ns[3] == 1)
		n.heard.SawQuarantine(time.Duration(ns[2])*time.Millisecond, ns[3] == 1)
	} else {
		n.heard.SawVote()
	}
	return answer{vote: v, value: asString(a[0]), ms: ns[0], counter: ns[1], high: ns[2], ready: ns[3] == 1}
}

// inspection reads the answers of an Inspect of key (answers[i] is
// nodes[i]'s) that took elapsed: every node's view, and the holder found
// on quorum of them, if any, its token and its remaining validity (less
// the drift allowance of its TTL).
func inspection(key string, nodes []*node, answers []answer, quorum int, elapsed time.Duration, drift func(time.Duration) time.Duration) (*Inspection, error) {
	in := &Inspection{Holder: Holder{Key: key}}
	var value string
	count := map[string]int{}
	for i, a := range answers {
		st := NodeResult{Node: nodes[i].addr, Master: nodes[i].master.Get(), Err: a.err}
		if a.vote != voteError {
			st.Value, st.Counter = a.value, uint64(max(0, a.counter))
			st.Quarantine = time.Duration(a.high) * time.Millisecond
			st.Quarantined = !a.ready || st.Quarantine > 0
			if a.ms > 0 {
				st.TTL = time.Duration(a.ms) * time.Millisecond
			}
			if a.vote == voteYes && a.value != "" {
				count[a.value]++
			}
		}
		in.Nodes = append(in.Nodes, st)
	}
	for v, n := range count {
		if n >= quorum {
			value = v
		}
	}
	if value == "" {
		return in, fmt.Errorf("%w: %q: no value on %d of %d nodes", ErrNoHolder, key, quorum, len(nodes))
	}
	var low time.Duration = -1
	for i, st := range in.Nodes {
		if answers[i].vote == voteYes && st.Value == value {
			if low < 0 || st.TTL < low {
				low = st.TTL
			}
		}
	}
	in.Holder = holderOf(key, value)
	in.Token = holderToken(value, answers, quorum)
	in.Remaining = max(0, low-elapsed-drift(low))
	return in, nil
}

// holderToken is the holder's token as a majority read tells it
// (docs/design.md §4.4): the highest counter c that the holder's answering
// nodes at exactly c, together with the nodes that did not answer, make a
// majority. The token t qualifies: a majority holds the value at exactly t.
// Any other counter is on fewer than a majority of nodes (the token's
// majority holds t), so with every node answering only t qualifies, and
// a silent node cannot hide t. When none qualifies (a read made while the
// acquisition is on its way: its grants or its write-back), 0, not known
// yet: the highest holder's counter may be a spare's, granted above t
// before t's majority showed, and the next term's token.
func holderToken(value string, answers []answer, quorum int) uint64 {
	silent := 0
	at := map[uint64]int{}
	for _, a := range answers {
		switch {
		case a.vote == voteError:
			silent++
		case a.vote == voteYes && a.value == value:
			at[uint64(max(0, a.counter))]++
		}
	}
	var token uint64
	for c, n := range at {
		if n+silent >= quorum && c > token {
			token = c
		}
	}
	return token
}
