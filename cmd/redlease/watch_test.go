package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// watch prints the state, then every change: a leader elected by an
// Elector of the test, its resignation, and the next leader; SIGINT ends
// it with exit 0.
func TestWatch(t *testing.T) {
	g, nodes := servers(t, 3)
	client := testClient(t, g, "")
	w := startCLI(t, "watch", "--name", "watched", "--nodes", nodes)
	stamp := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)`
	w.stdout.waitFor(t, "no leader", matches(`(?m)^`+stamp+`  no leader$`))

	first := campaign(t, client, "watched", "cand-1")
	tok1 := first.term(t).Token
	w.stdout.waitFor(t, "cand-1", matches(fmt.Sprintf(`(?m)^%s  leader cand-1  token %d  about \S+ left$`, stamp, tok1)))

	second := standBy(t, client, "watched", "cand-2")
	require.NoError(t, first.Resign(context.Background()))
	second.waitElected(t)
	tok2 := second.term(t).Token
	assert.Greater(t, tok2, tok1)
	w.stdout.waitFor(t, "cand-2", matches(fmt.Sprintf(`(?m)^%s  leader cand-2  token %d  about \S+ left$`, stamp, tok2)))

	assert.Equal(t, exitOK, w.interrupt(t, signalCause{syscall.SIGINT}))
	assert.NotContains(t, w.stderr.String(), "ERROR")
}

// watch --json prints one object per change.
func TestWatchJSON(t *testing.T) {
	g, nodes := servers(t, 3)
	client := testClient(t, g, "")
	campaign(t, client, "watched-json", "cand-1")
	w := startCLI(t, "watch", "--name", "watched-json", "--nodes", nodes, "--json")
	out := w.stdout.waitContains(t, "\n")
	var line watchLine
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(out)), &line), out)
	assert.Equal(t, "leader", line.State)
	assert.Equal(t, "cand-1", line.Leader)
	assert.Positive(t, line.Token)
	_, err := time.Parse(timeLayout, line.Time)
	assert.NoError(t, err)
	assert.Equal(t, exitOK, w.interrupt(t, signalCause{syscall.SIGINT}))
}

func matches(re string) func(string) bool {
	r := regexp.MustCompile(re)
	return r.MatchString
}
