package redlock

import (
	"errors"
	"sync/atomic"
)

// stragglers tracks the requests of an acquisition that were still running
// when it returned (it returns at a majority), so that each node's copy of
// a released lock is deleted once: by the release if the node's request
// had finished by then, or else by the request itself when it finishes.
//
// Why no copy is left behind: the request marks itself finished before it
// reads gone, and Release sets gone before it reads which requests are
// running; with sequentially consistent atomics at least one of the two
// sees the other's write, so a finished request is released by Release, a
// running one by itself, and a request in between perhaps by both.
type stragglers struct {
	gone    atomic.Bool   // set before any release of the value is sent
	running []atomic.Bool // per node: its acquire request has not finished
}

func newStragglers(n int) *stragglers {
	s := &stragglers{running: make([]atomic.Bool, n)}
	for i := range s.running {
		s.running[i].Store(true)
	}
	return s
}

// acquiring reports whether node i's acquire request is still running
// (Release leaves the node to late).
func (s *stragglers) acquiring(i int) bool { return s.running[i].Load() }

// late handles an acquire answer that came after the acquisition returned:
// once the value is gone (a failed attempt, a released or lost lock), a
// yes, or an error that may hide a yes (a reply lost after the server ran
// the script), is undone on its node.
func (s *stragglers) late(c *Client, n *node, a answer, key, value string) {
	if (a.vote == VoteYes || a.vote == VoteError) && s.gone.Load() {
		c.releaseOn(n, key, value)
	}
}

// errStillAcquiring: Release left a node whose acquire request was still
// running to that request, which deletes the copy when it finishes.
var errStillAcquiring = errors.New("acquire request still running: its copy is deleted when it finishes")
