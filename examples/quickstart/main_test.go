package main

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/internal/testing/testnodes"
)

// TestMain checks that the quickstart leaves no goroutine behind.
func TestMain(m *testing.M) { testnodes.Main(m) }

// The quickstart must keep running: make test runs it on embedded nodes,
// and checks the story it tells.
func TestQuickstart(t *testing.T) {
	t.Setenv("REDLEASE_NODES", "")
	s := testnodes.RunExample(t, 20*time.Second, run)
	assert.Contains(t, s, "crashes")
	assert.Regexp(t, `took over after the crash, in \S+`, s)
	assert.Regexp(t, `waking up late, writes with token \d+: refused: true`, s)
	assert.Regexp(t, `took over after the resignation, in \S+`, s)
	assert.Regexp(t, `term \d+ over: election: resigned`, s)
	assert.Contains(t, s, "observer: no leader")
	assert.Regexp(t, `observer: leader \w+ \(token \d+\)`, s)
	assert.NotContains(t, s, "not ready", "embedded nodes are brand new: nothing to wait for")
	var tokens []int
	for _, m := range regexp.MustCompile(`elected, fencing token (\d+)`).FindAllStringSubmatch(s, -1) {
		n, _ := strconv.Atoi(m[1])
		tokens = append(tokens, n)
	}
	require.Len(t, tokens, 3, "three terms")
	for i := 1; i < len(tokens); i++ {
		assert.Greater(t, tokens[i], tokens[i-1], "tokens grow with every term")
	}
}

// On real nodes seen for the first time, without REDLEASE_BOOTSTRAP, the
// quickstart says in one line why nobody is elected yet and for how long
// (the readiness of a candidate), and what skips the wait.
func TestQuickstartSaysWhyOnFreshNodes(t *testing.T) {
	g := redistest.Start(t, 3)
	t.Setenv("REDLEASE_NODES", strings.Join(g.Addrs(), ","))
	t.Setenv("REDLEASE_BOOTSTRAP", "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &testnodes.LogBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, out) }()
	// Stopped once it said why (within 500ms when the host is idle).
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "not ready") }, 10*time.Second, 10*time.Millisecond,
		"no readiness line: %s", out)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled, "nobody is elected within the quarantine")
	s := out.String()
	assert.Regexp(t, `\] not ready: election: unhealthy: "quickstart/leader": waiting: 3 of 3 nodes quarantined, (30|29|28)s left \(0 votes, 2 needed\); `, s)
	assert.Contains(t, s, "REDLEASE_BOOTSTRAP=1 (Client.Bootstrap, redlease bootstrap) skips the wait: never after a crash")
	assert.NotContains(t, s, "elected, fencing token")
}
