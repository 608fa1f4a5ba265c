package redlock

import (
	"slices"
	"time"

	"github.com/redlease/redlease/internal/reach"
)

// epoch is the origin of the nodes' answer times: a reading of the
// monotonic clock, so that the times stored as integers keep it.
var epoch = time.Now()

// answered records that n gave a valid answer (a vote) now.
func (n *node) answered() { n.lastAnswer.Store(int64(time.Since(epoch)) + 1) }

// answeredAt is when n last answered; the zero Time if never.
func (n *node) answeredAt() time.Time {
	t := n.lastAnswer.Load()
	if t == 0 {
		return time.Time{}
	}
	return epoch.Add(time.Duration(t - 1))
}

// lastMajority returns when a majority of the nodes last answered: the
// quorum-th latest of their last answers; the zero Time if never.
func (c *Client) lastMajority() time.Time {
	at := make([]int64, len(c.nodes))
	for i, n := range c.nodes {
		at[i] = n.lastAnswer.Load()
	}
	slices.Sort(at)
	t := at[len(at)-c.quorum]
	if t == 0 {
		return time.Time{}
	}
	return epoch.Add(time.Duration(t - 1))
}

// markerSeen is what the last answer that read a node's quarantine marker
// said, when the node did not vote (docs/design.md §4.9).
type markerSeen struct {
	until  time.Time // when its quarantine ends
	raised bool      // its fencing floor is raised
}

// sawVote records an answer that read n's marker and found that n votes.
func (n *node) sawVote() { n.seen.Store(nil) }

// sawQuarantine records an answer that read n's marker and found it
// quarantined for left more (0: over), its floor raised or not.
func (n *node) sawQuarantine(left time.Duration, raised bool) {
	if left <= 0 && raised {
		n.seen.Store(nil)
		return
	}
	n.seen.Store(&markerSeen{until: time.Now().Add(left), raised: raised})
}

// floorRaised records that n's fencing floor was raised: it votes once
// its quarantine ends.
func (n *node) floorRaised() {
	if m := n.seen.Load(); m != nil && !m.raised {
		n.seen.CompareAndSwap(m, &markerSeen{until: m.until, raised: true})
	}
}

// heard is what c last heard from each of its voters (redlockx.Client.Heard).
func (c *Client) heard() []reach.Node {
	now := time.Now()
	out := make([]reach.Node, len(c.nodes))
	for i, n := range c.nodes {
		out[i].Answered = n.answeredAt()
		if m := n.seen.Load(); m != nil && !(m.raised && !now.Before(m.until)) {
			out[i].Quarantined, out[i].Left = true, max(0, m.until.Sub(now))
		}
	}
	return out
}
