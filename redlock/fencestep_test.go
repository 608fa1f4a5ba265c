package redlock

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/testnodes"
)

// The fencing step (fencing.go) on its own: given an acquisition's
// answers, which token it hands out and where it writes it back.

func TestFenceStepTally(t *testing.T) {
	nodes := make([]*node, 5)
	for i := range nodes {
		nodes[i] = newNode(nil, "n"+strconv.Itoa(i), true)
	}
	yes := func(c int64) answer { return answer{vote: voteYes, counter: c} }
	for _, tc := range []struct {
		name    string
		answers []answer
		t       int64
		at      int
		behind  []int
	}{
		{"all agree", []answer{yes(7), yes(7), yes(7), yes(7), yes(7)}, 7, 5, nil},
		{"one ahead", []answer{yes(7), yes(8), yes(7), yes(7), yes(7)}, 8, 1, []int{0, 2, 3, 4}},
		{"only yes-nodes count", []answer{yes(4), {vote: voteNo, counter: 9}, {vote: voteError}, yes(5), {vote: voteQuarantined, counter: 9}}, 5, 1, []int{0}},
		{"no grant", []answer{{vote: voteNo}, {vote: voteNo}, {vote: voteNo}, {vote: voteNo}, {vote: voteNo}}, 0, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFenceStep(nil, nodes, "k", "v", tc.answers)
			assert.Equal(t, tc.t, f.t)
			assert.Equal(t, tc.at, f.at)
			var behind []int
			for _, n := range f.behind {
				i, _ := strconv.Atoi(n.addr[1:])
				behind = append(behind, i)
			}
			assert.Equal(t, tc.behind, behind)
		})
	}
}

func TestFenceAnswer(t *testing.T) {
	assert.Equal(t, voteYes, fenceAnswer(1, nil, 5).vote)
	assert.Equal(t, voteNo, fenceAnswer(0, nil, 5).vote)
	a := fenceAnswer(-1, nil, 5)
	assert.Equal(t, voteError, a.vote)
	assert.EqualError(t, a.err, "fencing counter is above token 5")
	boom := errors.New("boom")
	a = fenceAnswer(1, boom, 5)
	assert.Equal(t, voteError, a.vote)
	assert.ErrorIs(t, a.err, boom)
}

// fenceRig is a Client over three miniredis nodes on which the test sets
// each node's lock value and counter of key by hand.
type fenceRig struct {
	c  *Client
	ms []*miniredis.Miniredis
}

func newFenceRig(t *testing.T) fenceRig {
	ms, cs := testnodes.Minis(t, 3)
	// A NodeTimeout that a loaded machine does not run out of: the tests
	// count on every answer.
	return fenceRig{c: newClient(t, Config{NodeTimeout: 2 * time.Second}, cs), ms: ms}
}

// set gives node i the lock value and the counter c (none when 0).
func (r fenceRig) set(t *testing.T, i int, key, value string, c int64) {
	t.Helper()
	require.NoError(t, r.ms[i].Set(key, value))
	if c > 0 {
		require.NoError(t, r.ms[i].Set(key+":fence", strconv.FormatInt(c, 10)))
	}
}

func (r fenceRig) counter(t *testing.T, i int, key string) string {
	t.Helper()
	v, _ := r.ms[i].Get(key + ":fence")
	return v
}

// grantedToken gives every node the value "v" of "k" with the given
// counters, and returns the token of the fencing step of an acquisition
// whose grants replied them.
func (r fenceRig) grantedToken(t *testing.T, counters ...int64) uint64 {
	t.Helper()
	answers := make([]answer, len(counters))
	for i, c := range counters {
		r.set(t, i, "k", "v", c)
		answers[i] = answer{vote: voteYes, counter: c}
	}
	f := newFenceStep(r.c, r.c.nodes, "k", "v", answers)
	tok, err := f.token(context.Background())
	require.NoError(t, err)
	return tok
}

func TestFenceStepFastPathWritesNothing(t *testing.T) {
	r := newFenceRig(t)
	assert.Equal(t, uint64(6), r.grantedToken(t, 6, 6, 4))
	assert.Equal(t, "4", r.counter(t, 2, "k"), "a majority held the token: no write-back")
}

func TestFenceStepWritesBack(t *testing.T) {
	r := newFenceRig(t)
	assert.Equal(t, uint64(9), r.grantedToken(t, 9, 5, 5))
	// The step returns once a majority holds 9; the other write may land
	// later.
	testnodes.WaitValue(t, r.ms[1:], "k:fence", "9")
}

// TestFenceStepFails: a node whose counter is above the token and a node
// that no longer holds the value leave the token short of a majority; the
// error lists the node that held it, then the write-backs.
func TestFenceStepFails(t *testing.T) {
	r := newFenceRig(t)
	r.set(t, 0, "k", "v", 7)
	r.set(t, 1, "k", "v", 9) // above: never hand 7 out
	r.set(t, 2, "k", "other", 3)
	answers := []answer{{vote: voteYes, counter: 7}, {vote: voteYes, counter: 6}, {vote: voteYes, counter: 3}}
	f := newFenceStep(r.c, r.c.nodes, "k", "v", answers)
	_, err := f.token(context.Background())
	var qe *QuorumError
	require.ErrorAs(t, err, &qe)
	assert.ErrorIs(t, err, ErrNotAcquired)
	assert.Equal(t, "fence", qe.Op)
	assert.Equal(t, 1, qe.Yes)
	assert.Equal(t, "1 nodes held token 7 already", qe.Reason)
	require.Len(t, qe.Nodes, 3)
	assert.Equal(t, voteYes, qe.Nodes[0].vote())
	assert.Equal(t, r.c.nodes[0].addr, qe.Nodes[0].Node)
	assert.EqualError(t, qe.Nodes[1].Err, "fencing counter is above token 7")
	assert.Equal(t, voteNo, qe.Nodes[2].vote())
	assert.Equal(t, "9", r.counter(t, 1, "k"), "a counter above the token is left alone")
	assert.Equal(t, "3", r.counter(t, 2, "k"), "nothing is written where the value is not held")
}

func TestFenceStepNoCounter(t *testing.T) {
	f := newFenceStep(nil, nil, "k", "v", nil)
	_, err := f.token(context.Background())
	assert.EqualError(t, err, "no fencing counter in the grants")
}
