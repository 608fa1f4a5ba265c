package redlock

import (
	"time"

	"github.com/redlease/redlease/internal/reach"
	"github.com/redlease/redlease/internal/redlockx"
)

// Config returns the client's configuration, with every default filled in
// (NodeTimeout, DriftFactor, MaxTTL, ...): the one the client runs with.
func (c *Client) Config() Config { return c.cfg }

// Internal returns the part of c that the packages built on redlock in
// this module (lease, observer, election, cmd/redlease) use beyond its
// API: its quorum, the change notices' Pub/Sub on its nodes, and what its
// nodes last answered. Its type is internal to this module: other programs
// cannot name it and have no use for it.
func (c *Client) Internal() redlockx.Client { return internal{c} }

// internal implements redlockx.Client for a Client.
type internal struct{ c *Client }

func (i internal) Quorum() int { return i.c.quorum }

// Publish and Subscribe: see notice.go.

func (i internal) Nodes() []string {
	out := make([]string, len(i.c.nodes))
	for j, n := range i.c.nodes {
		out[j] = n.addr
	}
	return out
}

func (i internal) LastMajority() time.Time {
	hs := make([]*reach.Heard, len(i.c.nodes))
	for j, n := range i.c.nodes {
		hs[j] = &n.heard
	}
	return reach.LastMajority(hs, i.c.quorum)
}

func (i internal) Heard() []reach.Node {
	now := time.Now()
	out := make([]reach.Node, len(i.c.nodes))
	for j, n := range i.c.nodes {
		out[j] = n.heard.Node(now)
		out[j].Function = n.fcall.Load()
	}
	return out
}

func (i internal) Outcome(err error) string { return outcome(err) }
