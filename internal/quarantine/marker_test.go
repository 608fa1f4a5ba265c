package quarantine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The decision of a readiness pass (tally, marker.go) on its own:
// from one set's marker answers, which quarantined nodes get which
// fencing floor (docs/design.md §4.9, S6).

// markerCase is one case of TestMarkersDecision.
type markerCase struct {
	name    string
	answers []Marker
	seen    int64
	closed  bool
	floors  []int64 // per node; none: no raise
}

const none = -1 // in markerCase.floors: the node's floor is not raised

// markerCases are TestMarkersDecision's cases.
func markerCases() []markerCase {
	healthy := func(high int64) Marker { return Marker{State: Healthy, High: high} }
	waiting := func(high int64) Marker { return Marker{State: Quarantined, Left: 4 * time.Second, High: high} } // quarantine not over
	over := func(high int64) Marker { return Marker{State: Quarantined, High: high} }                           // quarantine over, floor not raised
	down := Marker{State: Unreachable}
	return []markerCase{
		{
			name:    "healthy majority: the healthy nodes' highest token, whatever the others report",
			answers: []Marker{healthy(7), healthy(9), healthy(8), waiting(40), over(50)},
			floors:  []int64{none, none, none, 9, 9},
		},
		{
			name:    "healthy majority with nodes down: still raised",
			answers: []Marker{healthy(7), healthy(9), healthy(8), down, waiting(1)},
			floors:  []int64{none, none, none, none, 9},
		},
		{
			name:    "no healthy majority, a node down: closed (it may hold the highest token)",
			answers: []Marker{healthy(7), over(3), over(2), down, over(1)},
			seen:    5,
			closed:  true,
		},
		{
			name:    "no healthy majority, quarantines not over: closed",
			answers: []Marker{healthy(7), waiting(3), waiting(2)},
			closed:  true,
		},
		{
			name:    "no healthy majority, every node answered, enough quarantines over: the highest token of all, or seen",
			answers: []Marker{healthy(7), over(3), waiting(12)},
			seen:    5,
			floors:  []int64{none, 12, none},
		},
		{
			name:    "what the client saw counts when it is higher",
			answers: []Marker{over(3), over(2), over(0)},
			seen:    30,
			floors:  []int64{30, 30, 30},
		},
		{
			name:    "fresh nodes: floor 0",
			answers: []Marker{over(0), over(0), over(0)},
			floors:  []int64{0, 0, 0},
		},
	}
}

func TestMarkersDecision(t *testing.T) {
	for _, tc := range markerCases() {
		t.Run(tc.name, func(t *testing.T) {
			quorum := len(tc.answers)/2 + 1
			m := readMarkers(tc.answers)
			assert.Equal(t, tc.closed, m.closed(quorum))
			if tc.closed {
				return
			}
			floors := make([]int64, len(tc.answers))
			for i, a := range tc.answers {
				f, ok := m.floor(a, quorum, tc.seen)
				floors[i] = none
				if ok {
					floors[i] = f
				}
			}
			assert.Equal(t, tc.floors, floors)
		})
	}
}

// TestMarkersTally: what readMarkers counts.
func TestMarkersTally(t *testing.T) {
	m := readMarkers([]Marker{
		{State: Healthy, High: 4},
		{State: Quarantined, Left: 10 * time.Millisecond, High: 6},
		{State: Quarantined, High: 2},
		{State: Unreachable, High: 99}, // an error reports nothing
	})
	assert.Equal(t, tally{healthy: 1, over: 1, unreachable: 1, floorHealth: 4, floorAll: 6}, m)
}
