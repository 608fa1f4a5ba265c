package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"

	"github.com/redlease/redlease/redlock"
)

// run's hooks name the nodes that could not vote, once per set of nodes,
// and ignore attempts that every node answered.
func TestRunHooksNameNodes(t *testing.T) {
	var b bytes.Buffer
	h := &runHooks{log: hclog.New(&hclog.LoggerOptions{Output: &b})}
	down := &redlock.QuorumError{Op: "acquire", Need: 2, Yes: 1, Nodes: []redlock.NodeResult{
		{Node: "a:1", Vote: redlock.VoteYes},
		{Node: "b:2", Vote: redlock.VoteError, Err: errors.New("dial tcp b:2: connect: connection refused")},
		{Node: "c:3", Vote: redlock.VoteError, Err: redlock.ErrNotAwaited},
	}}
	attempt := func(err error) { h.Observe(redlock.Event{Kind: redlock.EventAcquire, Key: "k", Err: err}) }
	attempt(down)
	attempt(down) // the same nodes: not again so soon
	attempt(&redlock.QuorumError{Need: 2, Nodes: []redlock.NodeResult{{Node: "a:1", Vote: redlock.VoteNo}}})
	attempt(errors.New("not a quorum error"))
	h.Observe(redlock.Event{Kind: redlock.EventAcquire, Key: "k"}) // won: nothing to say
	out := b.String()
	assert.Equal(t, 1, strings.Count(out, "nodes could not vote"), out)
	assert.Contains(t, out, "b:2: dial tcp b:2: connect: connection refused")
	assert.NotContains(t, out, "c:3")
}

// The CLI's logger writes a joined error on one line (hclog alone would
// spread it over an indented block).
func TestLoggerOneLinePerRecord(t *testing.T) {
	var b bytes.Buffer
	out := &outputs{err: newRedactWriter(&b)}
	h := &runHooks{log: out.logger(hclog.Info, false)}
	h.Observe(redlock.Event{Kind: redlock.EventExtend, Key: "k",
		Err: errors.Join(errors.New("node a: timeout"), errors.New("node b: refused"))})
	assert.Equal(t, 1, strings.Count(b.String(), "\n"), b.String())
	assert.Contains(t, b.String(), `error="node a: timeout; node b: refused"`)
}
