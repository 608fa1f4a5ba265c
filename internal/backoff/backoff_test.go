package backoff

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestJitterBounds(t *testing.T) {
	assert.Zero(t, Jitter(0))
	assert.Zero(t, Jitter(-time.Second))
	seen := map[bool]int{} // below the mean, above it
	for range 1000 {
		d := Jitter(100 * time.Millisecond)
		assert.GreaterOrEqual(t, d, 50*time.Millisecond)
		assert.LessOrEqual(t, d, 150*time.Millisecond)
		seen[d > 100*time.Millisecond]++
	}
	assert.Positive(t, seen[true], "some delays above the mean")
	assert.Positive(t, seen[false], "some delays below the mean")
}

func TestUniform(t *testing.T) {
	assert.Equal(t, time.Second, Uniform(time.Second, time.Second))
	assert.Equal(t, time.Second, Uniform(time.Second, 0))
	for range 100 {
		d := Uniform(time.Millisecond, 4*time.Millisecond)
		assert.GreaterOrEqual(t, d, time.Millisecond)
		assert.LessOrEqual(t, d, 4*time.Millisecond)
	}
}

func TestExpGrowsToCapAndResets(t *testing.T) {
	e := Exp{Base: 10 * time.Millisecond, Cap: 45 * time.Millisecond}
	// The means: 10, 20, 40, then the cap 45 for good.
	for i, mean := range []time.Duration{10, 20, 40, 45, 45, 45} {
		mean *= time.Millisecond
		d := e.Next()
		assert.GreaterOrEqual(t, d, mean/2, "delay %d", i)
		assert.LessOrEqual(t, d, mean*3/2, "delay %d", i)
	}
	e.Reset()
	d := e.Next()
	assert.LessOrEqual(t, d, 15*time.Millisecond, "after Reset the delay starts at Base again")

	def := Exp{Base: time.Millisecond} // default cap: 8 * Base
	var last time.Duration
	for range 20 {
		last = def.Next()
	}
	assert.LessOrEqual(t, last, 12*time.Millisecond)
	assert.GreaterOrEqual(t, last, 4*time.Millisecond)
}
