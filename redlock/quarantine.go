package redlock

import (
	"context"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
)

// raiseForgetful lifts the fencing floor of quarantined nodes (docs/design.md §4.9,
// S6) to the highest token seen on a majority of healthy nodes, so that once
// they vote again no token can go back. It runs in the background; the nodes
// vote no until it has landed. Without a healthy majority among the answers
// it leaves the decision to raiseDegraded, which reads every node itself.
func (c *Client) raiseForgetful(nodes []*node, answers []answer) {
	var healthy int
	var floor int64
	var todo []int
	for i, a := range answers {
		switch a.vote {
		case voteYes, voteNo:
			healthy++
			floor = max(floor, a.high)
		case voteQuarantined:
			todo = append(todo, i)
		}
	}
	switch {
	case len(todo) == 0:
		return
	case healthy < c.quorum:
		c.raisePass()
		return
	}
	for _, i := range todo {
		a, n := answers[i], nodes[i]
		c.wg.Go(func() {
			if c.raise(n, a.created, floor) {
				c.logRaised(n, a.created, hclog.Info, "fencing floor raised; the node votes once its quarantine is over",
					"floor", floor, "quarantine_left", time.Duration(a.ms)*time.Millisecond)
			} else {
				c.ready.Want() // the next pass tries again
			}
		})
	}
}

// raisePass reads the marker of every node and raises the quarantined ones:
// from the healthy nodes when a majority of them answers; otherwise, only
// when every node answers and every node that is not healthy is one whose
// quarantine is over (none merely unreachable: an unreachable node may be a
// healthy one holding the highest token), from the highest token any node
// reports or this client saw, logged: a fresh deployment that was not
// bootstrapped (no token anywhere: nothing can repeat, an Info line), or a
// majority that lost its state together (a warning: tokens are only as good
// as what survived). Otherwise the nodes stay closed, and the pass runs
// again when their quarantine ends or a node answers again (see
// readiness). probe.lua also starts the quarantine of a node that has no
// marker. One pass at a time runs, in the background.
func (c *Client) raisePass() {
	if !c.raising.CompareAndSwap(false, true) {
		return
	}
	c.wg.Go(func() {
		defer c.raising.Store(false)
		answers := c.fan.Run(context.Background(), c.all, c.probeMarker, nil, nil)
		seen := c.ready.High() // tokens this client saw handed out or reported
		k := len(c.nodes)
		for b, set := range c.sets {
			c.raiseSet(set, answers[b*k:(b+1)*k], seen)
		}
	})
}

// raiseSet is raisePass for one set of voters (a bucket of a cluster
// Client: its floors come from its own copies), given their markers'
// answers and the highest token the client saw before the pass.
func (c *Client) raiseSet(nodes []*node, answers []answer, seen int64) {
	m := readMarkers(answers)
	c.ready.SawHigh(m.floorAll)
	if m.closed(c.quorum) {
		// Fail closed: wait for more nodes, or for quarantines to end.
		for _, a := range answers {
			if a.vote == voteQuarantined {
				c.ready.SawQuarantine(time.Duration(a.ms)*time.Millisecond, true) // a pass at its end
			}
		}
		if m.unreachable > 0 {
			c.ready.Want()
		}
		return
	}
	for i, a := range answers {
		n := nodes[i]
		floor, ok := m.floor(a, c.quorum, seen)
		switch {
		case !ok:
		case !c.raise(n, a.created, floor):
			c.ready.Want()
		case !m.degraded(c.quorum):
			c.logRaised(n, a.created, hclog.Info, "fencing floor raised; the node votes once its quarantine is over",
				"floor", floor, "quarantine_left", time.Duration(a.ms)*time.Millisecond)
		case floor == 0:
			c.logRaised(n, a.created, hclog.Info, "no node reports a fencing token and this client saw none: fresh nodes, the node votes now (Client.Bootstrap skips the first quarantine of a new deployment)",
				"floor", floor)
		default:
			c.logRaised(n, a.created, hclog.Warn, "no healthy majority: a node's fencing floor was raised from what every node reports; tokens may repeat if a majority lost its state",
				"floor", floor)
		}
	}
}

// markers is a readiness pass's reading of one set's markers (the
// answers of probeMarker; docs/design.md §4.9).
type markers struct {
	healthy     int   // nodes that vote
	over        int   // quarantined nodes whose quarantine is over
	unreachable int   // nodes that did not answer
	floorHealth int64 // the highest token of the healthy nodes
	floorAll    int64 // the highest token of every node that answered
}

func readMarkers(answers []answer) markers {
	var m markers
	for _, a := range answers {
		switch {
		case a.vote == voteError:
			m.unreachable++
			continue
		case a.vote == voteYes:
			m.healthy++
			m.floorHealth = max(m.floorHealth, a.high)
		case a.ms == 0:
			m.over++
		}
		m.floorAll = max(m.floorAll, a.high)
	}
	return m
}

// degraded: no healthy majority answered, to take a floor from.
func (m markers) degraded(quorum int) bool { return m.healthy < quorum }

// closed: no floor may be raised now. Without a healthy majority, a floor
// is taken from every node only when every node answered (an unreachable
// node may be a healthy one holding the highest token) and the healthy
// nodes with those whose quarantine is over make a majority.
func (m markers) closed(quorum int) bool {
	return m.degraded(quorum) && (m.unreachable > 0 || m.healthy+m.over < quorum)
}

// floor is the fencing floor that the node that answered a gets, given
// the highest token the client saw (seen); false when it gets none now:
// it is not quarantined, or, without a healthy majority, its quarantine
// is not over. The caller has checked closed.
func (m markers) floor(a answer, quorum int, seen int64) (int64, bool) {
	switch {
	case a.vote != voteQuarantined:
		return 0, false
	case !m.degraded(quorum):
		return m.floorHealth, true
	case a.ms == 0:
		return max(m.floorAll, seen), true
	}
	return 0, false
}

// probeMarker runs probe.lua on a node for a readiness pass: the answer
// is voteYes for a healthy node, voteQuarantined with ms (quarantine
// left), created and high otherwise.
func (c *Client) probeMarker(ctx context.Context, n *node) answer {
	res, err := n.run(ctx, newCall(scriptProbe, []string{n.marker()}, c.args.maxTTL, c.args.mode, "0", c.args.layout))
	if err != nil {
		return answer{vote: voteError, err: err}
	}
	a, err := replyArray(res, 5)
	if err != nil {
		return answer{vote: voteError, err: err}
	}
	var ns [4]int64
	if err := intsOf(a, ns[:], 0, 1, 3, 4); err != nil {
		return answer{vote: voteError, err: err}
	}
	v := voteYes // healthy
	if ns[0] > 0 || ns[1] != 1 {
		v = voteQuarantined
		n.heard.SawQuarantine(time.Duration(ns[0])*time.Millisecond, ns[1] == 1)
	} else {
		n.heard.SawVote()
	}
	return answer{vote: v, ms: ns[0], created: ns[2], high: ns[3]}
}

// raise runs raise.lua on a node: its floor becomes at least floor if its
// marker is still the incarnation that was read (created).
func (c *Client) raise(n *node, created, floor int64) bool {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.NodeTimeout)
	defer cancel()
	v, err := intReply(n.run(ctx, newCall(scriptRaise, []string{n.marker()}, strconv.FormatInt(created, 10), strconv.FormatInt(floor, 10))))
	if err != nil {
		c.log.Debug("raising fencing floor failed", "node", n.name(), "error", err)
		return false
	}
	if v == 1 {
		n.heard.FloorRaised()
	}
	return v == 1
}
