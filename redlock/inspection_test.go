package redlock

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Reading an Inspect's answers (inspection, inspect.go) on its own.

func inspectNodes(n int) []*node {
	nodes := make([]*node, n)
	for i := range nodes {
		nodes[i] = newNode(nil, "n"+strconv.Itoa(i), true)
	}
	return nodes
}

// holding is the answers of nodes that hold value "a" with counters; node
// silent (-1: none) timed out instead.
func holding(counters []int64, silent int) []answer {
	answers := make([]answer, len(counters))
	for i, c := range counters {
		answers[i] = answer{vote: voteYes, value: "a", ms: 900, counter: c, ready: true}
	}
	if silent >= 0 {
		answers[silent] = answer{vote: voteError, err: errNodeTimeout{D: 50 * time.Millisecond, NodeTimeout: true}}
	}
	return answers
}

// noDrift leaves the remaining validity as the nodes tell it.
func noDrift(time.Duration) time.Duration { return 0 }

func TestInspectionHolder(t *testing.T) {
	nodes := inspectNodes(5)
	held := func(ttl time.Duration, counter int64) answer {
		return answer{vote: voteYes, value: "a", ms: ttl.Milliseconds(), counter: counter, ready: true}
	}
	boom := errors.New("boom")
	answers := []answer{
		held(900*time.Millisecond, 7), // a node whose counter lagged: its grant was below the token
		held(800*time.Millisecond, 9),
		held(950*time.Millisecond, 9),
		{vote: voteQuarantined, value: "a", ms: 100, counter: 12, high: 3000},
		{vote: voteError, err: boom},
	}
	in, err := inspection("k", nodes, answers, 3, 50*time.Millisecond, func(time.Duration) time.Duration { return 10 * time.Millisecond })
	require.NoError(t, err)
	assert.Equal(t, "k", in.Key)
	assert.Equal(t, "a", in.Value)
	assert.Equal(t, uint64(9), in.Token, "the highest counter of the holder's nodes; a quarantined node's does not count")
	assert.Equal(t, 740*time.Millisecond, in.Remaining, "the lowest TTL of the holder's nodes, less the read and the drift")
	require.Len(t, in.Nodes, 5)
	assert.Equal(t, NodeResult{Node: "n0", Value: "a", TTL: 900 * time.Millisecond, Counter: 7}, in.Nodes[0])
	assert.Equal(t, NodeResult{Node: "n3", Value: "a", TTL: 100 * time.Millisecond, Counter: 12, Quarantined: true, Quarantine: 3 * time.Second}, in.Nodes[3],
		"a quarantined node is shown, but does not count")
	assert.Equal(t, NodeResult{Node: "n4", Err: boom}, in.Nodes[4])
}

// TestInspectionNoHolder: values short of a majority (a quarantined node
// does not count) are no holder; every node's view is still returned.
func TestInspectionNoHolder(t *testing.T) {
	nodes := inspectNodes(3)
	answers := []answer{
		{vote: voteYes, value: "a", ms: 900},
		{vote: voteQuarantined, value: "a", ms: 900},
		{vote: voteYes, value: "b", ms: 900},
	}
	in, err := inspection("k", nodes, answers, 2, 0, noDrift)
	require.ErrorIs(t, err, ErrNoHolder)
	assert.Contains(t, err.Error(), `"k": no value on 2 of 3 nodes`)
	assert.Empty(t, in.Value)
	assert.Len(t, in.Nodes, 3)
}

// TestInspectionExpiring: a holder whose time is up on the nodes has no
// validity left, not a negative one.
func TestInspectionExpiring(t *testing.T) {
	nodes := inspectNodes(3)
	answers := []answer{{vote: voteYes, value: "a", ms: 5, counter: 1}, {vote: voteYes, value: "a", ms: 5, counter: 1}, {vote: voteYes}}
	in, err := inspection("k", nodes, answers, 2, 20*time.Millisecond, noDrift)
	require.NoError(t, err)
	assert.Zero(t, in.Remaining)
	assert.Equal(t, uint64(1), in.Token)
}

// TestInspectionTokenWithSilentNode: the case of issue #32. Counters
// 42/22/42 (node 1 lagged: paused or restarted earlier) gave a fast-path
// token 42; node 1 keeps its grant 22 with the holder's value. Whichever
// node is silent, the read reports 42, never 22.
func TestInspectionTokenWithSilentNode(t *testing.T) {
	nodes := inspectNodes(3)
	counters := []int64{42, 22, 42}
	for silent := -1; silent < len(nodes); silent++ {
		in, err := inspection("k", nodes, holding(counters, silent), 2, 0, noDrift)
		require.NoError(t, err, "node %d silent", silent)
		assert.Equal(t, uint64(42), in.Token, "node %d silent", silent)
	}
}

// TestInspectionTokenWithLateSpares: an acquisition handed out 10 on three
// of five nodes; the other two granted late, above it (15, spares that
// keep the lock's fault tolerance, read before the acquisition lowered
// them to 10). With every node answering, or a spare silent, the read
// reports 10, never 15. A read made before the write-back reached a
// majority, or before the token's own majority granted, reports 0 (not
// known yet): the highest holder's counter there may be a spare's, the
// next term's token (TestIntegrationManyTerms: an observer reported a
// term with the next one's token, and never with its own).
func TestInspectionTokenWithLateSpares(t *testing.T) {
	nodes := inspectNodes(5)
	read := func(counters []int64, silent int) uint64 {
		in, err := inspection("k", nodes, holding(counters, silent), 3, 0, noDrift)
		require.NoError(t, err)
		return in.Token
	}
	spares := []int64{10, 15, 10, 15, 10}
	assert.Equal(t, uint64(10), read(spares, -1), "every node answering")
	assert.Equal(t, uint64(10), read(spares, 1), "a spare silent")
	assert.Zero(t, read([]int64{12, 9, 11, 9, 8}, -1), "write-back on its way: not known yet")

	// Spares granted (15) before the last of the token's majority (10):
	// node 2 not yet the holder's.
	answers := holding([]int64{10, 10, 0, 15, 15}, -1)
	answers[2].value = ""
	in, err := inspection("k", nodes, answers, 3, 0, noDrift)
	require.NoError(t, err)
	assert.Equal(t, "a", in.Value)
	assert.Zero(t, in.Token, "the token's majority not granted yet: not known, never a spare's")
}
