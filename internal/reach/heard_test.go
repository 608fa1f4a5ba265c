package reach

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// A majority answered when the quorum-th latest of the nodes' last answers
// came; never while fewer than a quorum answered. (Real time: the answer
// times count from a reading of the process's clock, outside any synctest
// bubble; the sleeps only make the answers' times distinct.)
func TestLastMajority(t *testing.T) {
	hs := []*Heard{{}, {}, {}}
	assert.True(t, LastMajority(hs, 2).IsZero(), "nobody answered")
	hs[0].Answered()
	first := hs[0].AnsweredAt()
	assert.True(t, LastMajority(hs, 2).IsZero(), "one of three answered")
	time.Sleep(time.Millisecond)
	hs[1].Answered()
	assert.Equal(t, first, LastMajority(hs, 2), "the majority's oldest answer counts")
	time.Sleep(time.Millisecond)
	hs[0].Answered()
	assert.Equal(t, hs[1].AnsweredAt(), LastMajority(hs, 2), "node 0 answered again: node 1's answer is the oldest of the latest majority")
	assert.True(t, LastMajority(hs, 3).IsZero(), "node 2 never answered")
}

// A node is quarantined from an answer that says so until one says it
// votes, or until its quarantine ends once its floor is raised.
func TestHeardNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var h Heard
		assert.Equal(t, Node{}, h.Node(time.Now()), "nothing heard")
		h.Answered()
		h.SawQuarantine(5*time.Second, false)
		n := h.Node(time.Now())
		assert.True(t, n.Quarantined)
		assert.Equal(t, 5*time.Second, n.Left)
		assert.Equal(t, h.AnsweredAt(), n.Answered)

		time.Sleep(6 * time.Second)
		n = h.Node(time.Now())
		assert.True(t, n.Quarantined, "over, but its floor is not raised yet")
		assert.Zero(t, n.Left)
		h.FloorRaised()
		assert.False(t, h.Node(time.Now()).Quarantined, "over and raised: it votes")

		h.SawQuarantine(time.Second, true)
		assert.True(t, h.Node(time.Now()).Quarantined, "raised, but a second left")
		h.SawVote()
		assert.False(t, h.Node(time.Now()).Quarantined)
		h.SawQuarantine(0, true)
		assert.False(t, h.Node(time.Now()).Quarantined, "over and raised")
	})
}
