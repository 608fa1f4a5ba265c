package redlock

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/redlease/redlease/internal/quarantine"
	"github.com/redlease/redlease/internal/scripts"
)

// The quarantine guard (docs/design.md §4.7-§4.9, S6) is
// internal/quarantine.Guard; this file gives it the Client's nodes and
// their answers.

// guardConfig is what c's guard is given: c's nodes (probe.lua on each
// for a readiness pass; none with the quarantine off), its log and its
// wait group.
func guardConfig(c *Client) quarantine.GuardConfig {
	gc := quarantine.GuardConfig{Quorum: c.quorum, SetSize: len(c.nodes), NodeTimeout: c.cfg.NodeTimeout, Log: c.log, WG: &c.wg}
	if c.cfg.DisableQuarantine {
		return gc
	}
	gc.Probe = func(ctx context.Context) []quarantine.Probed {
		answers := c.fan.Run(ctx, c.all, func(ctx context.Context, n *node) answer { return n.probeMarker(ctx, &c.args) }, nil, nil)
		out := make([]quarantine.Probed, len(answers))
		for i, a := range answers {
			out[i] = quarantine.Probed{Node: c.all[i], Marker: a.marker()}
		}
		return out
	}
	return gc
}

// raiseForgetful hands an acquisition's answers (answers[i] is nodes[i]'s)
// to the guard (quarantine.Guard.RaiseForgetful) when a node among them
// is quarantined.
func raiseForgetful(g *quarantine.Guard, nodes []*node, answers []answer) {
	if !slices.ContainsFunc(answers, func(a answer) bool { return a.vote == voteQuarantined }) {
		return
	}
	ns := make([]quarantine.Node, len(nodes))
	ms := make([]quarantine.Marker, len(answers))
	for i, a := range answers {
		ns[i], ms[i] = nodes[i], a.marker()
	}
	g.RaiseForgetful(ns, ms)
}

// marker is what a says about the node's quarantine marker.
func (a answer) marker() quarantine.Marker {
	s := quarantine.Unreachable
	switch a.vote {
	case voteYes, voteNo:
		s = quarantine.Healthy
	case voteQuarantined:
		s = quarantine.Quarantined
	}
	return quarantine.Marker{State: s, Left: time.Duration(a.ms) * time.Millisecond, Created: a.created, High: a.high, Server: a.server}
}

// probeMarker runs probe.lua on n for a readiness pass: the answer is
// voteYes for a healthy node, voteQuarantined with ms (quarantine left),
// created and high otherwise.
func (n *node) probeMarker(ctx context.Context, args *scriptArgs) answer {
	return n.probe(ctx, args, "0")
}

// probeAnswer reads a reply of probe.lua (res, or err): probeMarker's
// answer, n's heard updated.
func (n *node) probeAnswer(res any, err error) answer {
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

// RaiseFloor runs raise.lua on n: its floor becomes at least floor if its
// marker is still the incarnation that was read (created).
func (n *node) RaiseFloor(ctx context.Context, created, floor int64) (bool, error) {
	v, err := intReply(n.run(ctx, scripts.NewCall(scripts.Raise, []string{n.marker()}, strconv.FormatInt(created, 10), strconv.FormatInt(floor, 10))))
	if err != nil {
		return false, err
	}
	if v == 1 {
		n.heard.FloorRaised()
	}
	return v == 1, nil
}
