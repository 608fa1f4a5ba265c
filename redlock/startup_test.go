package redlock

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/testnodes"
)

// The start-up verdict (startup.go) on its own: given what each node's
// probe reported, which nodes New refuses, and what it logs.

// newStartup is the verdict of a start-up of a server-less client over n
// nodes whose logs go to the returned buffer.
func newStartup(t *testing.T, n int) (*startup, []*node, *testnodes.LogBuffer) {
	c, nodes := bareClient(t, n)
	out := &testnodes.LogBuffer{}
	c.log = linesLogger(out)
	return startupOf(c), nodes, out
}

func TestStartupAllHealthy(t *testing.T) {
	s, nodes, out := newStartup(t, 3)
	for i, n := range nodes {
		require.NoError(t, s.node(n, probeInfo{runID: string(rune('a'+i)) + "0000000000000", raised: true}, nil))
	}
	require.NoError(t, s.verdict(true))
	assert.Zero(t, out.Count(""), "nothing logged")
	for _, n := range nodes {
		assert.False(t, n.heard.AnsweredAt().IsZero(), "%s answered", n.addr)
	}
}

func TestStartupSameServerTwice(t *testing.T) {
	s, nodes, _ := newStartup(t, 3)
	require.NoError(t, s.node(nodes[0], probeInfo{runID: "abc", raised: true}, nil))
	require.NoError(t, s.node(nodes[1], probeInfo{runID: "def", raised: true}, nil))
	err := s.node(nodes[2], probeInfo{runID: "abc", raised: true}, nil)
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), "nodes node#0 and node#2 are the same server (run_id abc)")
}

// TestStartupUnknownRunID: nodes whose run_id is unknown are not the same
// server by it.
func TestStartupUnknownRunID(t *testing.T) {
	s, nodes, _ := newStartup(t, 2)
	for _, n := range nodes {
		require.NoError(t, s.node(n, probeInfo{raised: true}, nil))
	}
	require.NoError(t, s.verdict(false))
}

func TestStartupInvalidConfigRefusesAtOnce(t *testing.T) {
	s, nodes, _ := newStartup(t, 3)
	bad := errors.Join(ErrInvalidArgument, errors.New("maxmemory-policy allkeys-lru"))
	assert.Same(t, bad, s.node(nodes[0], probeInfo{}, bad))
}

func TestStartupUnreachable(t *testing.T) {
	s, nodes, out := newStartup(t, 3)
	require.NoError(t, s.node(nodes[0], probeInfo{raised: true}, nil))
	require.NoError(t, s.node(nodes[1], probeInfo{}, errors.New("connection refused")))
	require.NoError(t, s.node(nodes[2], probeInfo{raised: true}, nil))
	assert.NoError(t, s.verdict(false), "New accepts a node that is down: it votes once up")
	assert.Equal(t, 1, out.Count("node did not answer at start-up", "node#1"))
	assert.EqualError(t, s.verdict(true), "redlock: bootstrap did not reach every node: node#1: connection refused")
}

func TestStartupAccessDenied(t *testing.T) {
	s, nodes, _ := newStartup(t, 3)
	require.NoError(t, s.node(nodes[0], probeInfo{raised: true}, nil))
	require.NoError(t, s.node(nodes[1], probeInfo{}, testnodes.ReplyError("WRONGPASS invalid username-password pair")))
	require.NoError(t, s.node(nodes[2], probeInfo{}, errors.New("connection refused")))
	err := s.verdict(false)
	require.ErrorIs(t, err, ErrAccessDenied)
	assert.Contains(t, err.Error(), "node#1: WRONGPASS")
	assert.NotContains(t, err.Error(), "node#2", "an unreachable node is not a refusal")
}

// TestStartupQuarantine: quarantined nodes are logged once, in one record
// with the longest wait, and the client notes when their quarantine ends
// (a readiness pass is due then); a node whose floor is not raised makes
// one due soon.
func TestStartupQuarantine(t *testing.T) {
	s, nodes, out := newStartup(t, 3)
	t0 := time.Now()
	require.NoError(t, s.node(nodes[0], probeInfo{left: 2 * time.Second, raised: true}, nil))
	require.NoError(t, s.node(nodes[1], probeInfo{left: 5 * time.Second, raised: true}, nil))
	require.NoError(t, s.node(nodes[2], probeInfo{raised: true}, nil))
	assert.False(t, s.guard.Ready.Wanted())
	due := s.guard.Ready.Due()
	assert.WithinRange(t, due, t0.Add(2*time.Second), time.Now().Add(2*time.Second), "the first quarantine's end")
	require.NoError(t, s.verdict(false))
	assert.Equal(t, 1, out.Count(quarantineMsg, `nodes="node#0 (2s), node#1 (5s)" wait=5s`))

	s, nodes, _ = newStartup(t, 1)
	require.NoError(t, s.node(nodes[0], probeInfo{}, nil))
	assert.True(t, s.guard.Ready.Wanted(), "a floor to raise")
}
