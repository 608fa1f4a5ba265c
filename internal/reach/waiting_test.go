package reach

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestWait(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name          string
		voting        int
		left          []time.Duration
		want          string // "" when not waiting
		nodes, quorum int
	}{
		{"a majority votes", 2, []time.Duration{5 * s}, "", 3, 2},
		{"nobody quarantined: silent nodes are no wait", 1, nil, "", 3, 2},
		{"fresh deployment", 0, []time.Duration{26*s + 100*time.Millisecond, 27 * s, 25 * s},
			"waiting: 3 of 3 nodes quarantined, 27s left (0 votes, 2 needed)", 3, 2},
		{"two restarted empty", 1, []time.Duration{9 * s, 3 * s},
			"waiting: 2 of 3 nodes quarantined, 3s left (1 votes, 2 needed)", 3, 2},
		{"one silent", 0, []time.Duration{400 * time.Millisecond, 20 * s},
			"waiting: 2 of 3 nodes quarantined, 20s left (0 votes, 1 did not answer, 2 needed)", 3, 2},
		{"too few quarantined for a majority: the last one", 0, []time.Duration{2 * s},
			"waiting: 1 of 3 nodes quarantined, 2s left (0 votes, 2 did not answer, 2 needed)", 3, 2},
		{"over, floors not raised", 1, []time.Duration{0, 0},
			"waiting: 2 of 3 nodes quarantined, quarantine over, fencing floor not raised yet (1 votes, 2 needed)", 3, 2},
		{"under a second", 2, []time.Duration{172*time.Millisecond + 333*time.Microsecond, 4 * s, 5 * s},
			"waiting: 3 of 5 nodes quarantined, 172ms left (2 votes, 3 needed)", 5, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, ok := Wait(tc.nodes, tc.quorum, tc.voting, tc.left)
			if tc.want == "" {
				assert.False(t, ok, "%v", w)
				return
			}
			assert.True(t, ok)
			assert.Equal(t, tc.want, w.String())
		})
	}
}
