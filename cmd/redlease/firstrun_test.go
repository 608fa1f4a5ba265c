package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// On fresh nodes, run says in one line why nobody is elected yet and
// names its own --bootstrap flag, not the library's Client.Bootstrap.
func TestRunSaysWhyNobodyIsElectedOnFreshNodes(t *testing.T) {
	_, nodes := servers(t, 3)
	c := startCLI(t, "run", "--name", "fresh", "--nodes", nodes, "--max-ttl", "20s", "--ttl", "2s", "--", "true")
	out := c.stderr.waitContains(t, "--bootstrap skips the wait")
	assert.NotContains(t, out, "Client.Bootstrap", "the CLI names its own flag")
	assert.Equal(t, 1, linesWith(out, "quarantine"), "one line says it:\n%s", out)
	assert.Contains(t, out, "quarantined=3")
	assert.Equal(t, 0, c.interrupt(t, signalCause{}), "interrupted while standing by")

	// With --bootstrap there is nothing to wait for, and nothing said.
	_, fresh := servers(t, 3)
	code, _, stderr := runCLI(t, "run", "--name", "fresh", "--nodes", fresh, "--bootstrap", "--", "true")
	assert.Equal(t, 0, code, stderr)
	assert.NotContains(t, stderr, "quarantine")
}

// With no node reachable, run gives up after --wait-majority with exit
// code 1 (README's table), having named each node once.
func TestRunExitsWhenNoMajorityAnswers(t *testing.T) {
	start := time.Now()
	code, _, stderr := runCLI(t, "run", "--name", "x", "--nodes", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3",
		"--wait-majority", "500ms", "--", "true")
	require.Equal(t, exitError, code, stderr)
	assert.Contains(t, stderr, "no majority of the nodes answers")
	assert.Contains(t, stderr, "--wait-majority")
	for _, n := range []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"} {
		assert.LessOrEqual(t, strings.Count(stderr, "node could not vote: node="+n+" "), 1, "throttled per node and cause:\n%s", stderr)
	}
	t.Logf("exit 1 after %s", time.Since(start).Round(time.Millisecond))
}

// The default --grace is a fraction of --ttl, so every valid --ttl works
// without --grace; an explicit --grace that does not fit is refused.
func TestGraceDefaultFitsTTL(t *testing.T) {
	conn := connFlags{nodeTimeout: 50 * time.Millisecond, maxTTL: 30 * time.Second}
	for _, ttl := range []time.Duration{200 * time.Millisecond, time.Second, 5 * time.Second, defaultTTL, 30 * time.Second} {
		p, err := planRun(ttl, -1, conn)
		require.NoError(t, err, "--ttl %s with the default --grace", ttl)
		assert.LessOrEqual(t, p.grace, ttl/4, "--ttl %s", ttl)
		assert.Less(t, p.margin, ttl, "--ttl %s", ttl)
	}
	p, err := planRun(10*time.Second, -1, conn)
	require.NoError(t, err)
	assert.Equal(t, 2500*time.Millisecond, p.grace, "TTL/4")
	_, err = planRun(5*time.Second, 5*time.Second, conn)
	assert.ErrorContains(t, err, "--grace (5s) does not fit --ttl (5s)")
}

// linesWith counts the lines of out that contain sub.
func linesWith(out, sub string) int {
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}
