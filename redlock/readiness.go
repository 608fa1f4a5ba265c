package redlock

import (
	"sync/atomic"
	"time"
)

// Readiness (docs/design.md §4.9): a node that may have forgotten its locks votes
// again once its quarantine is over and its fencing floor was raised. The
// floor is raised by the next contact of any kind, never only by lock
// traffic: an acquisition raises it from its own answers (raiseForgetful),
// and otherwise a readiness pass (raisePass: probe.lua on every node, which
// also starts the quarantine of a node that lost its marker, then raise.lua
// where needed) runs in the background, started by whatever call comes
// next (an acquisition, an extension, a release, an inspection):
//
//   - at once when a quarantine seen by an earlier call has ended (its end
//     is noted when the quarantine is seen), so that a node whose floor
//     could not be raised while it was quarantined (no healthy majority
//     then) is raised by the first call after its end;
//   - when a node was seen whose floor is not raised, at most every
//     probeSoon;
//   - every probeEvery in any case, so that a node that restarted between
//     two calls without an error (its locks gone, extensions answered "not
//     held") gets its marker, and its quarantine starts, while the client is
//     in use even if it makes no acquisition and no inspection.
//
// Passes go one at a time (Client.raising). A Client with the quarantine
// off makes none.
type readiness struct {
	last atomic.Int64 // UnixNano at which the last pass started
	due  atomic.Int64 // UnixNano at which a quarantine seen ends (0: none)
	want atomic.Bool  // a node was seen whose floor is not raised
	// high is the highest token this client saw a node report, a floor of
	// last resort when no healthy majority can give one (raisePass).
	high atomic.Int64
}

const (
	// probeSoon is how often a pass runs while a node is seen whose
	// fencing floor is not raised.
	probeSoon = time.Second
	// probeEvery is how often a Client in use runs a pass when nothing
	// else made it.
	probeEvery = 10 * time.Second
)

// sawQuarantine records a node seen in quarantine for left more (0: over),
// and whether its fencing floor is raised.
func (c *Client) sawQuarantine(left time.Duration, raised bool) {
	if !raised {
		c.ready.want.Store(true)
	}
	if left <= 0 {
		return
	}
	end := time.Now().Add(left).UnixNano()
	for {
		d := c.ready.due.Load()
		if d != 0 && d <= end {
			return
		}
		if c.ready.due.CompareAndSwap(d, end) {
			return
		}
	}
}

// sawHigh records a node's highest token.
func (c *Client) sawHigh(h int64) {
	for old := c.ready.high.Load(); h > old; old = c.ready.high.Load() {
		if c.ready.high.CompareAndSwap(old, h) {
			return
		}
	}
}

// readinessDue starts a readiness pass when one is due (see readiness);
// every fan-out calls it.
func (c *Client) readinessDue() {
	if c.cfg.DisableQuarantine || c.raising.Load() {
		return
	}
	now := time.Now().UnixNano()
	r := &c.ready
	switch d := r.due.Load(); {
	case d != 0 && now >= d:
		if !r.due.CompareAndSwap(d, 0) {
			return
		}
	case r.want.Load() && time.Duration(now-r.last.Load()) >= probeSoon:
		r.want.Store(false)
	case time.Duration(now-r.last.Load()) >= probeEvery:
	default:
		return
	}
	r.last.Store(now)
	c.raisePass()
}
