package quarantine

import "time"

// State is what one node's answer says about its vote.
type State int8

// The states an answer can show.
const (
	// Unreachable: no valid answer (timeout, connection or Redis error).
	Unreachable State = iota
	// Healthy: the node votes (yes or no).
	Healthy
	// Quarantined: the node may have forgotten locks and does not vote
	// until its quarantine is over and its fencing floor is raised.
	Quarantined
)

// Marker is what one node's answer said about its quarantine marker
// (docs/design.md §4.7-§4.9): the answer of an acquisition, or of
// probe.lua in a readiness pass.
type Marker struct {
	State   State
	Left    time.Duration // the quarantine left (0: over)
	Created int64         // the marker's incarnation, for a raise
	High    int64         // the node's highest token (its high-water mark)
	Server  int64         // the first 48 bits of the server's run_id (0: unknown)
}

// tally is a readiness pass's reading of one set's markers
// (docs/design.md §4.9).
type tally struct {
	healthy     int   // nodes that vote
	over        int   // quarantined nodes whose quarantine is over
	unreachable int   // nodes that did not answer
	floorHealth int64 // the highest token of the healthy nodes
	floorAll    int64 // the highest token of every node that answered
}

func readMarkers(ms []Marker) tally {
	var m tally
	for _, a := range ms {
		switch {
		case a.State == Unreachable:
			m.unreachable++
			continue
		case a.State == Healthy:
			m.healthy++
			m.floorHealth = max(m.floorHealth, a.High)
		case a.Left == 0:
			m.over++
		}
		m.floorAll = max(m.floorAll, a.High)
	}
	return m
}

// degraded: no healthy majority answered, to take a floor from.
func (m tally) degraded(quorum int) bool { return m.healthy < quorum }

// closed: no floor may be raised now. Without a healthy majority, a floor
// is taken from every node only when every node answered (an unreachable
// node may be a healthy one holding the highest token) and the healthy
// nodes with those whose quarantine is over make a majority.
func (m tally) closed(quorum int) bool {
	return m.degraded(quorum) && (m.unreachable > 0 || m.healthy+m.over < quorum)
}

// floor is the fencing floor that the node that answered a gets, given
// the highest token the client saw (seen); false when it gets none now:
// it is not quarantined, or, without a healthy majority, its quarantine
// is not over. The caller has checked closed.
func (m tally) floor(a Marker, quorum int, seen int64) (int64, bool) {
	switch {
	case a.State != Quarantined:
		return 0, false
	case !m.degraded(quorum):
		return m.floorHealth, true
	case a.Left == 0:
		return max(m.floorAll, seen), true
	}
	return 0, false
}
