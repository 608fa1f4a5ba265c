package reach

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Waiting says why no majority of nodes can vote while some of them
// answered that they are quarantined (docs/design.md §4.9): the readiness
// check of package election and `redlease status` print it the same way.
type Waiting struct {
	Nodes       int           // the voters
	Quorum      int           // votes needed
	Voting      int           // nodes that vote
	Quarantined int           // nodes that answered and are quarantined
	Left        time.Duration // until enough quarantines end for a majority (0: over, fencing floors not raised yet)
}

// Wait sums up nodes of which voting vote and the quarantined ones have
// left (one entry each, 0 for a quarantine that is over) of their
// quarantine. It reports false when a majority votes, or when no node is
// quarantined (then the others did not answer: not a wait).
func Wait(nodes, quorum, voting int, left []time.Duration) (Waiting, bool) {
	if voting >= quorum || len(left) == 0 {
		return Waiting{}, false
	}
	w := Waiting{Nodes: nodes, Quorum: quorum, Voting: voting, Quarantined: len(left)}
	sorted := slices.Sorted(slices.Values(left))
	// The quarantines that end first make the majority, if the nodes that
	// did not answer stay silent; at worst, the last one.
	need := min(quorum-voting, len(sorted))
	w.Left = max(0, sorted[need-1])
	return w, true
}

// String is "waiting: 2 of 3 nodes quarantined, 27s left (1 votes, 2
// needed)": a quarantined node is one that answered.
func (w Waiting) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "waiting: %d of %d nodes quarantined, ", w.Quarantined, w.Nodes)
	if w.Left > 0 {
		fmt.Fprintf(&b, "%s left", roundLeft(w.Left))
	} else {
		b.WriteString("quarantine over, fencing floor not raised yet")
	}
	fmt.Fprintf(&b, " (%d votes", w.Voting)
	if silent := w.Nodes - w.Voting - w.Quarantined; silent > 0 {
		fmt.Fprintf(&b, ", %d did not answer", silent)
	}
	fmt.Fprintf(&b, ", %d needed)", w.Quorum)
	return b.String()
}

// roundLeft rounds a wait for printing: to the second above one, up so
// that "0s" never shows while some is left; to the millisecond below.
func roundLeft(d time.Duration) time.Duration {
	if d >= time.Second {
		return (d + time.Second - 1).Truncate(time.Second)
	}
	return max(time.Millisecond, d.Round(time.Millisecond))
}
