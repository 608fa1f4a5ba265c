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
func (r *readiness) sawQuarantine(left time.Duration, raised bool) {
	if !raised {
		r.want.Store(true)
	}
	if left <= 0 {
		return
	}
	end := time.Now().Add(left).UnixNano()
	for {
		d := r.due.Load()
		if d != 0 && d <= end {
			return
		}
		if r.due.CompareAndSwap(d, end) {
			return
		}
	}
}

// sawHigh records a node's highest token.
func (r *readiness) sawHigh(h int64) {
	for old := r.high.Load(); h > old; old = r.high.Load() {
		if r.high.CompareAndSwap(old, h) {
			return
		}
	}
}

// restart records a pass of New's or Bootstrap's, started at now (UnixNano):
// what it finds replaces what earlier calls saw.
func (r *readiness) restart(now int64) {
	r.last.Store(now)
	r.want.Store(false)
	r.due.Store(0)
}

// passDue reports whether a readiness pass is due at now (UnixNano), and
// if so records that it starts.
func (r *readiness) passDue(now int64) bool {
	switch d := r.due.Load(); {
	case d != 0 && now >= d:
		if !r.due.CompareAndSwap(d, 0) {
			return false
		}
	case r.want.Load() && time.Duration(now-r.last.Load()) >= probeSoon:
		r.want.Store(false)
	case time.Duration(now-r.last.Load()) >= probeEvery:
	default:
		return false
	}
	r.last.Store(now)
	return true
}

// readinessDue starts a readiness pass when one is due (see readiness);
// every fan-out calls it.
func (c *Client) readinessDue() {
	if c.cfg.DisableQuarantine || c.raising.Load() {
		return
	}
	if c.ready.passDue(time.Now().UnixNano()) {
		c.raisePass()
	}
}
