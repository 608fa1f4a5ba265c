package checker

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/checker/wire"
)

// semHistory is a history of a semaphore: terms (pid, permit, token,
// start, last belief) with a validity well after their beliefs.
func semHistory(terms ...[5]int64) []wire.Event {
	var evs []wire.Event
	for _, tm := range terms {
		pid, permit, token, ts, last := int(tm[0]), int(tm[1]), uint64(tm[2]), tm[3], tm[4]
		evs = append(evs,
			wire.Event{Ev: wire.Elected, PID: pid, T: ts, TS: ts, Token: token, Permit: permit, VU: last + 1000},
			wire.Event{Ev: wire.Belief, PID: pid, T: last, TS: ts, First: ts, Last: last, N: 2})
	}
	return evs
}

// Semaphore's checks and their negative controls: two permits held at once
// is within K=2, three is not (CK); within one permit, overlapping terms
// (C1) and a token that does not increase (C2) are caught, and named by
// permit, while the other permit's tokens are not compared with them.
func TestSemaphore(t *testing.T) {
	ok := semHistory([5]int64{1, 0, 5, 0, 100}, [5]int64{2, 1, 3, 10, 90}, [5]int64{3, 0, 6, 150, 200}, [5]int64{4, 1, 4, 100, 120})
	ts, orphans := Terms(ok)
	require.Len(t, ByPermit(ts), 2)
	assert.Empty(t, Semaphore(ts, orphans, 2, true), "two at once, tokens increasing per permit")

	three := append(ok, semHistory([5]int64{5, 2, 1, 50, 60})...)
	ts, orphans = Terms(three)
	v := Semaphore(ts, orphans, 2, true)
	require.Len(t, v, 1)
	assert.True(t, strings.HasPrefix(v[0], "CK: term 1 of  (pid 5) on permit 2"), v[0])
	assert.Empty(t, Semaphore(ts, orphans, 3, true), "three at once is within K=3")

	// Permit 1 again, from before pid 4's term began to after it, under
	// pid 4's token.
	same := append(ok, semHistory([5]int64{5, 1, 4, 95, 130})...)
	ts, orphans = Terms(same)
	v = Semaphore(ts, orphans, 3, true)
	require.Len(t, v, 2, "%q", v)
	assert.Contains(t, v[0], "permit 1: C1: tenures overlap: term 4 of  (pid 5)")
	assert.Contains(t, v[1], "permit 1: C2: term 4 of  (pid 4)")
	assert.Len(t, Semaphore(ts, orphans, 3, false), 1, "without fencing, tokens are not compared")
}
