package election

import (
	"context"
	"time"

	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// Term is one tenure of leadership of this elector: it begins when the
// elector acquired the election's lease and ends when the lease is
// released or lost. A Term is a plain value, safe to copy and to share
// between goroutines; its Metadata map must not be modified.
type Term struct {
	// Holder is the term as others see it (observer.Observer.Leader,
	// redlock.Client.Inspect): the election's name (Key), the lease's
	// value (unique per term), the ID and Metadata it was published with
	// (Config.Lease.ID and Metadata), and its fencing Token, strictly
	// greater than the token of every earlier term of the election. Pass
	// the Token with every write the leader makes, to a store that
	// refuses tokens lower than the highest it has seen: that is what
	// protects the store from a leader that acts after its term ended (a
	// long pause). The Token is 0 when the client has fencing off.
	// Remaining and Expires are as of the term's start; [Term.ValidUntil]
	// moves with every refresh.
	redlock.Holder
	// Start is when the term began (after the acquisition), with a
	// monotonic clock reading.
	Start time.Time

	l *lease.Lease
}

// ValidUntil is the end of the term's validity: no other candidate can be
// elected before it unless this term is released. It moves forward with
// every refresh. The term's context is cancelled Config.Lease.SafetyMargin
// before it at the latest, unless the term is refreshed before
// ([Elector.IsLeader] then turns false).
func (t Term) ValidUntil() time.Time {
	if t.l == nil {
		return time.Time{}
	}
	return t.l.ValidUntil()
}

// held reports whether the term still lasts, checking its deadline by the
// local clock on every call (lease.Lease.Held).
func (t Term) held() bool { return t.l != nil && t.l.Held() }

// term is the elector's state of one term.
type term struct {
	Term
	ctx    context.Context
	cancel context.CancelCauseFunc

	elected chan struct{} // closed when OnElected returned (at once when none)
	over    chan struct{} // closed when the term was handed over (released)
	demoted chan struct{} // closed when OnDemoted returned (at once when none)

	to string // the successor it is handed to (Resign with an ID); under Elector.mu

	// Set before over is closed:
	releaseErr error     // the release's result
	endedAt    time.Time // when the handover began
	validEnd   time.Time // the validity the term had then
}

func newTerm(l *lease.Lease) *term {
	return &term{
		Term:    Term{Holder: l.Holder(), Start: time.Now(), l: l},
		elected: make(chan struct{}),
		over:    make(chan struct{}),
		demoted: make(chan struct{}),
	}
}

// closed reports whether ch is closed, without waiting.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
