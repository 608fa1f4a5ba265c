package redlock

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redlease/redlease/internal/clocksanity"
	"github.com/redlease/redlease/internal/scripts"
)

// Clock sanity (docs/design.md §6.5): every extend_many reply carries the
// server's TIME, which feeds the node's clocksanity.Detector. A node whose
// clock jumped forward or runs fast has its copies expire early: it is
// reported (an Error line, EventQuarantine with Evidence "clock_fast"),
// its answers to this client's extends stop counting for MaxTTL, a lock
// whose validity no longer rests on a majority without it ends at once
// (Lock.extended), and its quarantine marker is made anew, so that it
// votes no in every client's acquisitions for MaxTTL. A clock that runs
// slow or stepped back is reported (a Warn line, EventNodeError with
// Evidence "clock_slow"): its copies outlive their deadline, which costs
// no safety.

// Evidence values of the clock's events.
const (
	evidenceClockFast = "clock_fast"
	evidenceClockSlow = "clock_slow"
)

// clockWatch is a node's clock sanity state.
type clockWatch struct {
	det *clocksanity.Detector     // nil: not watched (a Client made before its nodes were set up)
	out atomic.Pointer[time.Time] // the node's extend answers do not count before this (monotonic)
}

// watchClocks gives every node of c its detector, with the clients' drift
// rate (Config.DriftFactor).
func (c *Client) watchClocks() {
	for _, n := range c.all {
		n.clock.det = clocksanity.New(c.cfg.DriftFactor)
	}
}

// clockOut reports that n's clock was seen jump less than MaxTTL ago: its
// answers to this client's extends do not count.
func (n *node) clockOut() bool {
	until := n.clock.out.Load()
	return until != nil && time.Now().Before(*until)
}

// clockOutAnswer is the answer of a node whose clock jumped, to an
// extend: quarantined (ms: for how much longer), its copies not counted.
func clockOutAnswer(n *node) answer {
	left := time.Duration(0)
	if until := n.clock.out.Load(); until != nil {
		left = max(0, time.Until(*until))
	}
	return answer{vote: voteQuarantined, ms: left.Milliseconds(),
		err: fmt.Errorf("redlock: node %s: its clock jumped forward or runs fast (seen less than MaxTTL ago): its copies do not count", n.name())}
}

// sampleClock feeds n's detector a reply carrying the server's TIME (sec,
// usec) to a request sent at sent and answered at recv, which extended
// locks with ttl, and acts on its verdict; it reports whether the node's
// clock was seen jump forward. The allowance is those locks' (drift(ttl)):
// a move within it costs them nothing.
func (c *Client) sampleClock(n *node, sent, recv time.Time, sec, usec int64, ttl time.Duration) bool {
	if n.clock.det == nil || c.cfg.unsafeOff.clockSanity() {
		return false
	}
	r := n.clock.det.Observe(sent, recv, time.Unix(sec, usec*1000), c.cfg.drift(ttl))
	switch r.Verdict {
	case clocksanity.Fast:
		c.clockFast(n, r)
		return true
	case clocksanity.Slow:
		err := fmt.Errorf("redlock: node %s: %s", n.name(), r)
		c.log.Warn("node clock runs slow or stepped back", "node", n.name(), "behind", r.Excess, "over", r.Over)
		c.observe(Event{Kind: EventNodeError, Node: n.addr, Evidence: evidenceClockSlow, Err: err})
	}
	return false
}

// clockFast acts on a node whose clock jumped forward or runs fast: its
// extend answers stop counting for MaxTTL, it is reported, and its
// quarantine marker is made anew (in the background).
func (c *Client) clockFast(n *node, r clocksanity.Result) {
	until := time.Now().Add(c.cfg.MaxTTL)
	n.clock.out.Store(&until)
	err := fmt.Errorf("redlock: node %s: %s; its copies no longer count toward the validity of locks held there, and it is quarantined for MaxTTL (%s)",
		n.name(), r, c.cfg.MaxTTL)
	c.log.Error("node clock jumped forward or runs fast: its lock copies may have expired early; quarantined",
		"node", n.name(), "ahead", r.Excess, "over", r.Over, "quarantine", c.cfg.MaxTTL)
	c.observe(Event{Kind: EventQuarantine, Node: n.addr, Duration: c.cfg.MaxTTL, Evidence: evidenceClockFast, Err: err})
	if c.cfg.DisableQuarantine {
		return
	}
	c.wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), max(time.Second, c.cfg.NodeTimeout))
		defer cancel()
		if a := n.probe(ctx, &c.args, probeRestart); a.err != nil {
			c.log.Warn("could not start the quarantine of a node whose clock jumped; it is quarantined for this client only",
				"node", n.name(), "error", a.err)
		}
	})
}

// probeRestart is probe.lua's third argument that makes the node's
// quarantine marker anew (probeMarker passes "0", Bootstrap "1").
const probeRestart = "2"

// probe runs probe.lua on n with flag as its third argument and reads its
// reply (probeMarker).
func (n *node) probe(ctx context.Context, args *scriptArgs, flag string) answer {
	res, err := n.run(ctx, scripts.NewCall(scripts.Probe, []string{n.marker()}, args.maxTTL, args.mode, flag, args.layout, newNonce()))
	return n.probeAnswer(res, err)
}

// yesOf marks the nodes that said yes among answers (answers[i] is the
// i-th node's).
func yesOf(answers []answer) []bool {
	out := make([]bool, len(answers))
	for i, a := range answers {
		out[i] = a.vote == voteYes
	}
	return out
}

// backersLocked counts the nodes whose copies l's validity rests on: they
// said yes to the call that set it (late yeses included; every node when
// that is not known), and their clocks were not seen jump since. Called
// with l.mu held.
func (l *Lock) backersLocked() int {
	k := 0
	for i, n := range l.nodes {
		if (l.backed == nil || l.backed[i]) && !n.clockOut() {
			k++
		}
	}
	return k
}

// backedLocked marks the nodes that said yes to l's extend that started
// at t0: in answers, or in a late answer noted before (copies.go). Called
// with l.mu held.
func (l *Lock) backedLocked(t0 time.Time, answers []answer) []bool {
	out := yesOf(answers)
	for i := range out {
		if i < len(l.notedAt) && l.notedAt[i].Equal(t0) && (l.lost == nil || !l.lost[i]) {
			out[i] = true
		}
	}
	return out
}
