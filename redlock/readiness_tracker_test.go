package redlock

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// The quarantine tracker (readiness, readiness.go) on its own: what it
// notes, and when it says a readiness pass is due. Time is synctest's.

func TestReadinessKeepsEarliestEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r readiness
		t0 := time.Now()
		r.sawQuarantine(5*time.Second, true)
		r.sawQuarantine(2*time.Second, true)
		r.sawQuarantine(9*time.Second, true)
		r.sawQuarantine(0, true) // over: no end to wait for
		assert.Equal(t, t0.Add(2*time.Second).UnixNano(), r.due.Load())
		assert.False(t, r.want.Load(), "every floor was raised")
		r.sawQuarantine(0, false)
		assert.True(t, r.want.Load(), "a floor to raise")
	})
}

func TestReadinessPassDue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r readiness
		now := func() int64 { return time.Now().UnixNano() }
		r.restart(now())
		assert.False(t, r.passDue(now()), "a pass just ran")

		r.sawQuarantine(3*time.Second, true)
		time.Sleep(3*time.Second - time.Nanosecond)
		assert.False(t, r.passDue(now()), "the quarantine is not over yet")
		time.Sleep(time.Nanosecond)
		assert.True(t, r.passDue(now()), "at the quarantine's end")
		assert.Zero(t, r.due.Load(), "one pass per end")
		assert.Equal(t, now(), r.last.Load())

		r.sawQuarantine(0, false)
		assert.False(t, r.passDue(now()), "a floor to raise: not twice within probeSoon")
		time.Sleep(probeSoon)
		assert.True(t, r.passDue(now()), "a floor to raise: after probeSoon")
		assert.False(t, r.want.Load())

		time.Sleep(probeEvery - time.Nanosecond)
		assert.False(t, r.passDue(now()))
		time.Sleep(time.Nanosecond)
		assert.True(t, r.passDue(now()), "every probeEvery in any case")
		assert.False(t, r.passDue(now()))
	})
}

// TestReadinessRestart: New's and Bootstrap's own pass forgets what was
// seen before.
func TestReadinessRestart(t *testing.T) {
	var r readiness
	r.sawQuarantine(time.Hour, false)
	r.restart(time.Now().UnixNano())
	assert.Zero(t, r.due.Load())
	assert.False(t, r.want.Load())
	assert.False(t, r.passDue(time.Now().UnixNano()))
}

func TestReadinessHighestToken(t *testing.T) {
	var r readiness
	var wg sync.WaitGroup
	for h := range int64(50) {
		wg.Go(func() { r.sawHigh(h) })
	}
	wg.Wait()
	assert.Equal(t, int64(49), r.high.Load())
	r.sawHigh(3)
	assert.Equal(t, int64(49), r.high.Load(), "never goes back")
}
