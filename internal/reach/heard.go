package reach

import (
	"slices"
	"sync/atomic"
	"time"
)

// epoch is the origin of the answer times: a reading of the monotonic
// clock, so that the times stored as integers keep it.
var epoch = time.Now()

// Heard is what a client heard from one node: when it last gave a valid
// answer (a vote of any kind), and what the last answer that read its
// quarantine marker said (docs/design.md §4.9). The zero Heard has heard
// nothing. Safe for concurrent use.
type Heard struct {
	lastAnswer atomic.Int64 // nanoseconds since epoch, plus one; 0: never
	seen       atomic.Pointer[marker]

	// OnChange, when set before the Heard is used, is called when an
	// answer shows the node begin a quarantine (quarantined, with the
	// time it has left: 0 when only its fencing floor awaits raising) or
	// vote again. A quarantine that ran out with no answer since is over
	// by Node, but OnChange hears of it at the next answer.
	OnChange func(quarantined bool, left time.Duration)
}

// marker is what the last answer that read a node's quarantine marker
// said, when the node did not vote.
type marker struct {
	until  time.Time // when its quarantine ends
	raised bool      // its fencing floor is raised
}

// Answered records that the node gave a valid answer now.
func (h *Heard) Answered() { h.lastAnswer.Store(int64(time.Since(epoch)) + 1) }

// AnsweredAt is when the node last answered; the zero Time if never.
func (h *Heard) AnsweredAt() time.Time { return at(h.lastAnswer.Load()) }

// at converts a stored answer time; the zero Time for 0.
func at(t int64) time.Time {
	if t == 0 {
		return time.Time{}
	}
	return epoch.Add(time.Duration(t - 1))
}

// SawVote records an answer that read the node's marker and found that it
// votes.
func (h *Heard) SawVote() { h.store(nil, 0) }

// SawQuarantine records an answer that read the node's marker and found it
// quarantined for left more (0: over), its floor raised or not.
func (h *Heard) SawQuarantine(left time.Duration, raised bool) {
	if left <= 0 && raised {
		h.store(nil, 0)
		return
	}
	h.store(&marker{until: time.Now().Add(left), raised: raised}, left)
}

// store records m (nil: the node votes) and reports a change to OnChange.
func (h *Heard) store(m *marker, left time.Duration) {
	old := h.seen.Swap(m)
	if (old == nil) != (m == nil) && h.OnChange != nil {
		h.OnChange(m != nil, max(0, left))
	}
}

// FloorRaised records that the node's fencing floor was raised: it votes
// once its quarantine ends.
func (h *Heard) FloorRaised() {
	if m := h.seen.Load(); m != nil && !m.raised {
		h.seen.CompareAndSwap(m, &marker{until: m.until, raised: true})
	}
}

// Node is what h says of its node at now.
func (h *Heard) Node(now time.Time) Node {
	n := Node{Answered: h.AnsweredAt()}
	if m := h.seen.Load(); m != nil && !(m.raised && !now.Before(m.until)) {
		n.Quarantined, n.Left = true, max(0, m.until.Sub(now))
	}
	return n
}

// LastMajority returns when quorum of the nodes last answered: the
// quorum-th latest of their last answers; the zero Time if never.
func LastMajority(nodes []*Heard, quorum int) time.Time {
	ts := make([]int64, len(nodes))
	for i, h := range nodes {
		ts[i] = h.lastAnswer.Load()
	}
	slices.Sort(ts)
	return at(ts[len(ts)-quorum])
}
