package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/redistest"
)

// status prints one row per node and the majority's verdict, in text and
// in JSON, with a leader elected by an Elector of the test; a frozen node
// shows its error and the verdict stands on the other two.
func TestStatus(t *testing.T) {
	g, nodes := servers(t, 3)
	client := testClient(t, g, "")
	leader := campaign(t, client, "status-test", "cand-1")
	token := leader.term(t).Token

	stdout := runOK(t, "status", "--name", "status-test", "--nodes", nodes)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 5, stdout) // header, 3 nodes, verdict
	assert.Regexp(t, `^NODE\s+HOLDER\s+TTL\s+TOKEN\s+QUARANTINE\s+ERROR$`, lines[0])
	for i, a := range g.Addrs() {
		assert.Regexp(t, fmt.Sprintf(`^%s\s+cand-1\s+\d+(\.\d+)?m?s\s+(\d+|-)\s+ready\s+-$`, regexp.QuoteMeta(a)), lines[1+i])
	}
	assert.Regexp(t, fmt.Sprintf(`^verdict: leader cand-1 \(token %d\), about \S+ left; 3 of 3 nodes answered, 2 needed$`, token), lines[4])

	stdout = runOK(t, "status", "--name", "status-test", "--nodes", nodes, "--json")
	var rep statusReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	assert.Equal(t, "status-test", rep.Name)
	require.Len(t, rep.Nodes, 3)
	for i, n := range rep.Nodes {
		assert.Equal(t, g.Addrs()[i], n.Node)
		assert.Equal(t, "cand-1", n.Holder)
		assert.Positive(t, n.TTLMs)
		assert.True(t, n.Ready)
		assert.Empty(t, n.Error)
	}
	assert.Equal(t, verdict{State: "leader", Leader: "cand-1", Token: token, RemainingMs: rep.Verdict.RemainingMs,
		Answered: 3, Nodes: 3, Quorum: 2}, rep.Verdict)
	assert.Positive(t, rep.Verdict.RemainingMs)

	// One node frozen: its row names its error, the verdict stands.
	t.Cleanup(func() { _ = g.Server(2).Resume() })
	require.NoError(t, g.Server(2).Pause())
	stdout = runOK(t, "status", "--name", "status-test", "--nodes", nodes)
	assert.Regexp(t, regexp.QuoteMeta(g.Addrs()[2])+`\s+-\s+-\s+-\s+-\s+no answer within NodeTimeout`, stdout)
	assert.Contains(t, stdout, fmt.Sprintf("verdict: leader cand-1 (token %d)", token))
	assert.Contains(t, stdout, "2 of 3 nodes answered, 2 needed")
}

// With nobody leading the verdict is "no leader" (exit 0); with fewer than
// a majority of nodes answering it is "unknown" (exit 1), and the rows name
// the unreachable nodes. Nodes come from REDLEASE_NODES here.
func TestStatusNoLeaderAndUnknown(t *testing.T) {
	g, nodes := servers(t, 3)
	t.Setenv(envNodes, nodes)
	stdout := runOK(t, "status", "--name", "nobody", "--bootstrap")
	assert.Contains(t, stdout, "verdict: no leader; 3 of 3 nodes answered, 2 needed")

	dead := []string{g.Addrs()[0], "127.0.0.1:1", "127.0.0.1:2"}
	code, stdout, _ := runCLI(t, "status", "--name", "nobody", "--nodes", strings.Join(dead, ","))
	assert.Equal(t, exitError, code)
	assert.Contains(t, stdout, "verdict: unknown: 1 of 3 nodes could answer, 2 needed")
	assert.Regexp(t, `127\.0\.0\.1:1\s+-\s+-\s+-\s+-\s+.*connection refused`, stdout)
	assert.Regexp(t, `127\.0\.0\.1:2\s+-\s+-\s+-\s+-\s+.*connection refused`, stdout)
	// The error names the step that failed (the connection), not a
	// configuration check that was never made.
	assert.NotContains(t, stdout, "configuration check")

	// --bootstrap names the node it could not reach.
	code, _, stderr := runCLI(t, "status", "--name", "nobody", "--bootstrap", "--nodes", strings.Join(dead, ","))
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "--bootstrap")
	assert.Contains(t, stderr, "127.0.0.1:1: dial tcp")
}

// status and watch on one Redis Cluster (--cluster): one row per copy of
// the election, with the master that serves it.
func TestStatusCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	nodes := strings.Join(cl.Addrs(), ",")
	stdout := runOK(t, "status", "--name", "on-cluster", "--cluster", "--bootstrap", "--nodes", nodes)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 5, stdout)
	for i, l := range lines[1:4] {
		// Copies are named by index (keys are spread over buckets, each
		// with its own slots), with the master of the key's slot.
		assert.Regexp(t, fmt.Sprintf(`^copy %d \(127\.0\.0\.1:\d+\)\s+-\s+-\s+-\s+ready\s+-$`, i), l)
	}
	assert.Equal(t, "verdict: no leader; 3 of 3 nodes answered, 2 needed", lines[4])
}

// On nodes new to redlease, status starts their quarantine and says how
// long nobody can be elected, with its own exit code (3); a node restarted
// empty is counted as quarantined, not as one that did not answer; two of
// three restarted empty make the verdict waiting again.
func TestStatusWaiting(t *testing.T) {
	g, nodes := servers(t, 3)
	code, stdout, stderr := runCLI(t, "status", "--name", "fresh", "--nodes", nodes)
	require.Equal(t, exitWaiting, code, "%s\n%s", stdout, stderr)
	assert.Regexp(t, `(?m)^verdict: waiting: 3 of 3 nodes quarantined, (30|29)s left \(0 votes, 2 needed\)$`, stdout)
	assert.Regexp(t, regexp.QuoteMeta(g.Addrs()[0])+`\s+-\s+-\s+-\s+quarantined \d`, stdout)

	code, stdout, stderr = runCLI(t, "status", "--name", "fresh", "--nodes", nodes, "--json")
	require.Equal(t, exitWaiting, code, stderr)
	var rep statusReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	assert.Equal(t, stateWaiting, rep.Verdict.State)
	assert.Equal(t, 3, rep.Verdict.Quarantined)
	assert.Zero(t, rep.Verdict.Answered)
	assert.InDelta(t, 30_000, rep.Verdict.WaitMs, 5_000)

	runOK(t, "bootstrap", "--nodes", nodes)
	require.NoError(t, g.Server(0).Restart(true))
	stdout = runOK(t, "status", "--name", "fresh", "--nodes", nodes)
	assert.Contains(t, stdout, "verdict: no leader; 2 of 3 nodes answered, 1 quarantined, 2 needed")

	require.NoError(t, g.Server(1).Restart(true))
	code, stdout, stderr = runCLI(t, "status", "--name", "fresh", "--nodes", nodes)
	require.Equal(t, exitWaiting, code, "%s\n%s", stdout, stderr)
	assert.Regexp(t, `(?m)^verdict: waiting: 2 of 3 nodes quarantined, \d+s left \(1 votes, 2 needed\)$`, stdout)
}
