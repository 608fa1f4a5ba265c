package checker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Negative controls of OverK: K+1 overlapping tenures are reported, K are
// not, and back to back is no overlap.
func TestOverK(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tn := func(start, end int) Tenure { return Tenure{Start: at(start), End: at(end)} }

	three := []Tenure{tn(0, 100), tn(10, 50), tn(20, 60)}
	assert.Empty(t, OverK(three, 3), "three at once is within K=3")
	assert.Equal(t, []Crowd{{Later: 2, Held: []int{0, 1}}}, OverK(three, 2))

	assert.Empty(t, OverK([]Tenure{tn(0, 10), tn(10, 20), tn(10, 20)}, 2), "a tenure that begins as another ends does not overlap it")
	// Given out of order; the crowd is found at the start of the fourth.
	four := []Tenure{tn(30, 40), tn(0, 100), tn(5, 35), tn(20, 31)}
	assert.Equal(t, []Crowd{{Later: 0, Held: []int{1, 2, 3}}}, OverK(four, 3))
	assert.Empty(t, OverK(four, 4))

	// K = 1 is the tenure checker's S1.
	one := []Tenure{tn(0, 100), tn(50, 60), tn(70, 80), tn(100, 110)}
	assert.Len(t, OverK(one, 1), len(Overlaps(one)))
	assert.Empty(t, OverK(nil, 1))
}
