// Package quarantine is redlock's quarantine guard (docs/design.md
// §4.7-§4.9, S6): a node's [Identity] (the markers and servers its
// answers showed), the [Readiness] tracker, which says when a readiness
// pass is due, and the [Guard], which raises the fencing floor of a node
// that may have forgotten votes before it counts again. It imports nothing
// of redlock: a Client gives its nodes as [Node] and their answers as
// [Marker].
package quarantine

import (
	"sync/atomic"
	"time"
)

// Readiness (docs/design.md §4.9): a node that may have forgotten its locks votes
// again once its quarantine is over and its fencing floor was raised. The
// floor is raised by the next contact of any kind, never only by lock
// traffic: an acquisition raises it from its own answers ([Guard.RaiseForgetful]),
// and otherwise a readiness pass ([Guard.Pass]: probe.lua on every node, which
// also starts the quarantine of a node that lost its marker, then raise.lua
// where needed) runs in the background, started by whatever call comes
// next (an acquisition, an extension, a release, an inspection):
//
//   - at once when a quarantine seen by an earlier call has ended (its end
//     is noted when the quarantine is seen), so that a node whose floor
//     could not be raised while it was quarantined (no healthy majority
//     then) is raised by the first call after its end;
//   - when a node was seen whose floor is not raised, at most every
//     ProbeSoon;
//   - every ProbeEvery in any case, so that a node that restarted between
//     two calls without an error (its locks gone, extensions answered "not
//     held") gets its marker, and its quarantine starts, while the client is
//     in use even if it makes no acquisition and no inspection.
//
// Passes go one at a time ([Guard]). A Client with the
// quarantine off makes none. The zero Readiness has seen nothing. Safe for
// concurrent use.
type Readiness struct {
	last atomic.Int64 // UnixNano at which the last pass started
	due  atomic.Int64 // UnixNano at which a quarantine seen ends (0: none)
	want atomic.Bool  // a node was seen whose floor is not raised
	// high is the highest token this client saw a node report, a floor of
	// last resort when no healthy majority can give one (Guard.Pass).
	high atomic.Int64
}

const (
	// ProbeSoon is how often a pass runs while a node is seen whose
	// fencing floor is not raised.
	ProbeSoon = time.Second
	// ProbeEvery is how often a Client in use runs a pass when nothing
	// else made it.
	ProbeEvery = 10 * time.Second
)

// SawQuarantine records a node seen in quarantine for left more (0: over),
// and whether its fencing floor is raised.
func (r *Readiness) SawQuarantine(left time.Duration, raised bool) {
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

// SawHigh records a node's highest token.
func (r *Readiness) SawHigh(h int64) {
	for old := r.high.Load(); h > old; old = r.high.Load() {
		if r.high.CompareAndSwap(old, h) {
			return
		}
	}
}

// Restart records a pass of New's or Bootstrap's, started at now (UnixNano):
// what it finds replaces what earlier calls saw.
func (r *Readiness) Restart(now int64) {
	r.last.Store(now)
	r.want.Store(false)
	r.due.Store(0)
}

// PassDue reports whether a readiness pass is due at now (UnixNano), and
// if so records that it starts.
func (r *Readiness) PassDue(now int64) bool {
	switch d := r.due.Load(); {
	case d != 0 && now >= d:
		if !r.due.CompareAndSwap(d, 0) {
			return false
		}
	case r.want.Load() && time.Duration(now-r.last.Load()) >= ProbeSoon:
		r.want.Store(false)
	case time.Duration(now-r.last.Load()) >= ProbeEvery:
	default:
		return false
	}
	r.last.Store(now)
	return true
}

// Want records that a node was seen whose floor is not raised (or a
// raise failed): the next pass is due after ProbeSoon.
func (r *Readiness) Want() { r.want.Store(true) }

// High is the highest token a node was seen to report ([Readiness.SawHigh]).
func (r *Readiness) High() int64 { return r.high.Load() }

// Wanted reports whether a node was seen whose floor is not raised, since
// the last pass.
func (r *Readiness) Wanted() bool { return r.want.Load() }

// Due is when the earliest quarantine seen since the last pass ends (a
// pass is due then); the zero Time when none was seen.
func (r *Readiness) Due() time.Time {
	if d := r.due.Load(); d != 0 {
		return time.Unix(0, d)
	}
	return time.Time{}
}
