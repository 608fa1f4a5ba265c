package checker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Negative controls of the shared checkers: each violation is reported,
// and a clean history is not.
func TestOverlaps(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tn := func(token uint64, start, end int) Tenure { return Tenure{Start: at(start), End: at(end), Token: token} }

	assert.Empty(t, Overlaps([]Tenure{tn(1, 0, 10), tn(2, 10, 20), tn(3, 25, 30)}), "back to back is not an overlap")
	assert.Equal(t, []Overlap{{Earlier: 0, Later: 1}}, Overlaps([]Tenure{tn(1, 0, 10), tn(2, 9, 20)}))
	// A long tenure is the one a later tenure is compared with.
	assert.Empty(t, Overlaps([]Tenure{tn(1, 0, 100)}), "a single tenure cannot overlap")
	assert.Equal(t, []Overlap{{Earlier: 0, Later: 1}, {Earlier: 0, Later: 2}},
		Overlaps([]Tenure{tn(1, 0, 100), tn(2, 50, 60), tn(3, 70, 80)}))
}

func TestNotIncreasing(t *testing.T) {
	tn := func(token uint64) Tenure { return Tenure{Token: token} }
	assert.Empty(t, NotIncreasing([]Tenure{tn(1), tn(2), tn(5)}))
	assert.Equal(t, []int{1, 3}, NotIncreasing([]Tenure{tn(1), tn(1), tn(2), tn(0)}), "equal and lower tokens")
}

func TestFence(t *testing.T) {
	var f Fence
	assert.Equal(t, Admitted, f.Admit(0, "a"), "token 0 with no holder yet (fencing off)")
	assert.Equal(t, Admitted, f.Admit(2, "b"))
	assert.Equal(t, Admitted, f.Admit(2, "b"), "the same holder again")
	assert.Equal(t, Stale, f.Admit(1, "a"))
	assert.Equal(t, Repeated, f.Admit(2, "c"))
	assert.Equal(t, Fence{Highest: 2, Holder: "b"}, f, "refusals change nothing")
	assert.Equal(t, Admitted, f.Admit(3, "c"))
}
