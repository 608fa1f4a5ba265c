package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A gap between ticks longer than their period is a pause, measured net of
// the period; ticks on time are none.
func TestPauseWatch(t *testing.T) {
	p := newPauseWatch(100 * time.Millisecond)
	start := p.last
	p.tick(start.Add(100 * time.Millisecond))
	p.tick(start.Add(210 * time.Millisecond))
	_, paused := p.paused(50 * time.Millisecond)
	assert.False(t, paused, "10ms late is no pause")
	p.tick(start.Add(5310 * time.Millisecond))
	p.tick(start.Add(5410 * time.Millisecond))
	d, paused := p.paused(50 * time.Millisecond)
	assert.True(t, paused)
	assert.Equal(t, 5*time.Second, d)
}
