package redlock

import (
	"errors"
	"sync"
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

	relOnce sync.Once
	rel     *scriptCall // the release of a standalone node, built once

	buf [inlineNodes]atomic.Bool // running's storage for up to inlineNodes nodes
}

// inlineNodes is how many nodes the per-call state of an acquisition or a
// fan-out keeps inline (one allocation instead of several).
const inlineNodes = 7

func newStragglers(n int) *stragglers {
	s := &stragglers{}
	if n <= inlineNodes {
		s.running = s.buf[:n]
	} else {
		s.running = make([]atomic.Bool, n)
	}
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
	if (a.vote == voteYes || a.vote == voteError) && s.gone.Load() {
		sc := s.release(key, value)
		if n.tag != "" {
			sc = releaseCall(n.lockKey(key), value, "", "", "0")
		}
		c.releaseOn(n, sc)
	}
}

// release is the release call of a standalone node, shared by the
// stragglers of one acquisition.
func (s *stragglers) release(key, value string) *scriptCall {
	s.relOnce.Do(func() { s.rel = releaseCall(key, value, "", "", "0") })
	return s.rel
}

// errStillAcquiring: Release left a node whose acquire request was still
// running to that request, which deletes the copy when it finishes.
var errStillAcquiring = errors.New("acquire request still running: its copy is deleted when it finishes")
