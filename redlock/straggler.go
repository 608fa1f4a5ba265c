package redlock

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/redlease/redlease/internal/scripts"
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
	gone    atomic.Bool            // set before any release of the value is sent
	ended   atomic.Pointer[unlock] // the release that ended a held lock, stored before gone (nil: a failed attempt)
	running []atomic.Bool          // per node: its acquire request has not finished

	// token is the acquisition's token once handed out (0 before, and
	// with fencing off); grants[i] the counter of node i's late yes (0:
	// none). A late grant above the token is lowered to it (see fenced).
	token  atomic.Int64
	grants []atomic.Int64

	relOnce sync.Once
	rel     *scriptCall // the release of a standalone node, built once

	buf  [inlineNodes]atomic.Bool  // running's storage for up to inlineNodes nodes
	gbuf [inlineNodes]atomic.Int64 // grants' storage
}

func newStragglers(n int) *stragglers {
	s := &stragglers{}
	if n <= inlineNodes {
		s.running, s.grants = s.buf[:n], s.gbuf[:n]
	} else {
		s.running, s.grants = make([]atomic.Bool, n), make([]atomic.Int64, n)
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
// the script), is undone on its node; a yes whose counter is above the
// token handed out is lowered to it (see fenced).
func (s *stragglers) late(c *Client, n *node, a answer, key, value string) {
	if (a.vote == voteYes || a.vote == voteError) && s.gone.Load() {
		n.runAlone(c.cfg.NodeTimeout, s.release(n, key, value))
		return
	}
	if a.vote != voteYes || a.counter <= 0 {
		return
	}
	s.grants[n.idx].Store(a.counter)
	if t := s.token.Load(); t > 0 && a.counter > t {
		c.wg.Go(func() { s.settle(c, n, key, value, t) })
	}
}

// fenced records the token t that the acquisition handed out, and lowers
// to t the counter of every late grant above it (settle.lua), keeping the
// copy: a spare that adds fault tolerance. Once lowered, no node holding
// the value has a counter above t, so a majority read reports exactly t
// with any node silent (docs/design.md §4.4, §4.5). A grant seen before t
// was stored is settled here, one seen after by late: late stores its
// counter before it reads the token, and fenced stores the token before
// it reads the counters, so with sequentially consistent atomics one of
// the two sees the other (perhaps both: a second settle finds nothing to
// do).
func (s *stragglers) fenced(c *Client, nodes []*node, t uint64, key, value string) {
	s.token.Store(int64(t))
	for i := range s.grants {
		if g := s.grants[i].Load(); g > int64(t) {
			c.wg.Go(func() { s.settle(c, nodes[i], key, value, int64(t)) })
		}
	}
}

// settle lowers node n's counter of key to the token t where the node
// holds value with a counter above t (settle.lua), bounded by c's
// NodeTimeout like the releases; run in the background.
func (s *stragglers) settle(c *Client, n *node, key, value string, t int64) {
	if c.cfg.unsafeOff.noSettle() {
		return // the negative control
	}
	n.runAlone(c.cfg.NodeTimeout, scripts.NewCall(scripts.Settle, []string{n.lockKey(key), n.fenceKey(key)}, value, strconv.FormatInt(t, 10)))
}

// end marks the value gone by the release u of a held lock: a straggler
// that deletes a copy later publishes u's notice too, so that a waiter
// hears of the release from every node that held a copy.
func (s *stragglers) end(u unlock) {
	s.ended.Store(&u)
	s.gone.Store(true)
}

// release is a straggler's release on node n: the ending release's (with
// its notice), or for a failed attempt a plain one, shared by the
// standalone nodes of one acquisition.
func (s *stragglers) release(n *node, key, value string) *scriptCall {
	if u := s.ended.Load(); u != nil {
		return u.call(n)
	}
	if n.tag != "" {
		return unlock{key: key, value: value}.call(n)
	}
	s.relOnce.Do(func() { s.rel = releaseCall(key, value, "", "", "0") })
	return s.rel
}

// errStillAcquiring: Release left a node whose acquire request was still
// running to that request, which deletes the copy when it finishes.
var errStillAcquiring = errors.New("acquire request still running: its copy is deleted when it finishes")
