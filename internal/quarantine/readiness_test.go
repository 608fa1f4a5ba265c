package quarantine

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// The quarantine tracker (Readiness, readiness.go) on its own: what it
// notes, and when it says a readiness pass is due. Time is synctest's.

func TestReadinessKeepsEarliestEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r Readiness
		t0 := time.Now()
		r.SawQuarantine(5*time.Second, true)
		r.SawQuarantine(2*time.Second, true)
		r.SawQuarantine(9*time.Second, true)
		r.SawQuarantine(0, true) // over: no end to wait for
		assert.Equal(t, t0.Add(2*time.Second).UnixNano(), r.due.Load())
		assert.False(t, r.want.Load(), "every floor was raised")
		r.SawQuarantine(0, false)
		assert.True(t, r.want.Load(), "a floor to raise")
	})
}

func TestReadinessPassDue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r Readiness
		now := func() int64 { return time.Now().UnixNano() }
		r.Restart(now())
		assert.False(t, r.PassDue(now()), "a pass just ran")

		r.SawQuarantine(3*time.Second, true)
		time.Sleep(3*time.Second - time.Nanosecond)
		assert.False(t, r.PassDue(now()), "the quarantine is not over yet")
		time.Sleep(time.Nanosecond)
		assert.True(t, r.PassDue(now()), "at the quarantine's end")
		assert.Zero(t, r.due.Load(), "one pass per end")
		assert.Equal(t, now(), r.last.Load())

		r.SawQuarantine(0, false)
		assert.False(t, r.PassDue(now()), "a floor to raise: not twice within ProbeSoon")
		time.Sleep(ProbeSoon)
		assert.True(t, r.PassDue(now()), "a floor to raise: after ProbeSoon")
		assert.False(t, r.want.Load())

		time.Sleep(ProbeEvery - time.Nanosecond)
		assert.False(t, r.PassDue(now()))
		time.Sleep(time.Nanosecond)
		assert.True(t, r.PassDue(now()), "every ProbeEvery in any case")
		assert.False(t, r.PassDue(now()))
	})
}

// TestReadinessRestart: New's and Bootstrap's own pass forgets what was
// seen before.
func TestReadinessRestart(t *testing.T) {
	var r Readiness
	r.SawQuarantine(time.Hour, false)
	r.Restart(time.Now().UnixNano())
	assert.Zero(t, r.due.Load())
	assert.False(t, r.want.Load())
	assert.False(t, r.PassDue(time.Now().UnixNano()))
}

func TestReadinessHighestToken(t *testing.T) {
	var r Readiness
	var wg sync.WaitGroup
	for h := range int64(50) {
		wg.Go(func() { r.SawHigh(h) })
	}
	wg.Wait()
	assert.Equal(t, int64(49), r.high.Load())
	r.SawHigh(3)
	assert.Equal(t, int64(49), r.high.Load(), "never goes back")
}
