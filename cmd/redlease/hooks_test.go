package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/redlockx"
	"github.com/redlease/redlease/redlock"
)

// attempt reports one campaign attempt to h.
func attempt(h *runHooks, err error) {
	h.Observe(redlock.Event{Kind: redlock.EventAcquire, Key: "k", Err: err})
}

// run's hooks name the nodes that could not vote, once per node and cause
// and then one summary per interval, and ignore attempts that every node
// answered.
func TestRunHooksNameNodes(t *testing.T) {
	var b bytes.Buffer
	h := newRunHooks(hclog.New(&hclog.LoggerOptions{Output: &b}), 0)
	now := time.Unix(0, 0)
	h.warn.now = func() time.Time { return now }
	down := func(port string) *redlock.QuorumError {
		return &redlock.QuorumError{Op: "acquire", Need: 2, Yes: 1, Nodes: []redlock.NodeResult{
			{Node: "a:1", Yes: true},
			{Node: "b:2", Err: errors.New("read tcp 127.0.0.1:" + port + "->b:2: i/o timeout")},
			{Node: "c:3", Err: redlockx.ErrNotAwaited},
		}}
	}
	// One node down for 30s, an attempt every 250ms: ~120 attempts.
	for i := range 120 {
		attempt(h, down(strings.Repeat("5", 1+i%4)))
		now = now.Add(250 * time.Millisecond)
	}
	attempt(h, &redlock.QuorumError{Need: 2, Nodes: []redlock.NodeResult{{Node: "a:1"}}})
	attempt(h, errors.New("not a quorum error"))
	attempt(h, nil) // won: nothing to say
	out := b.String()
	assert.Equal(t, 1, strings.Count(out, "node could not vote"), out)
	assert.Equal(t, 2, strings.Count(out, "node still could not vote"), "one summary per 10s:\n%s", out)
	assert.Contains(t, out, "times=40")
	assert.Contains(t, out, "b:2: read tcp")
	assert.NotContains(t, out, "c:3")
}

// The hooks give up once no majority has answered for their wait.
func TestRunHooksGiveUp(t *testing.T) {
	var cause error
	h := newRunHooks(hclog.NewNullLogger(), time.Millisecond)
	h.campaigning(func(err error) { cause = err })
	none := &redlock.QuorumError{Op: "acquire", Need: 2, Nodes: []redlock.NodeResult{
		{Node: "a:1", Err: errors.New("connection refused")},
		{Node: "b:2", Err: errors.New("connection refused")},
		{Node: "c:3", Quarantined: true},
	}}
	attempt(h, none) // the outage starts
	require.Eventually(t, func() bool { attempt(h, none); return cause != nil }, 5*time.Second, time.Millisecond)
	assert.ErrorIs(t, cause, errNoMajority)
	assert.Contains(t, cause.Error(), "a:1: connection refused", "the last attempt is in the chain")
}

// The CLI's logger writes a joined error on one line (hclog alone would
// spread it over an indented block).
func TestLoggerOneLinePerRecord(t *testing.T) {
	var b bytes.Buffer
	out := &outputs{err: newRedactWriter(&b)}
	h := newRunHooks(out.logger(hclog.Info, false), 0)
	h.Observe(redlock.Event{Kind: redlock.EventExtend, Key: "k",
		Err: errors.Join(errors.New("node a: timeout"), errors.New("node b: refused"))})
	assert.Equal(t, 1, strings.Count(b.String(), "\n"), b.String())
	assert.Contains(t, b.String(), `error="node a: timeout; node b: refused"`)
}
