package election

import (
	"context"
	"time"

	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/observer"
)

// Term is one tenure of leadership of this elector: it begins when the
// elector acquired the election's lease and ends when the lease is
// released or lost. A Term is a plain value, safe to copy and to share
// between goroutines; its Metadata map must not be modified.
type Term struct {
	// Token is the fencing token of the term: strictly greater than the
	// token of every earlier term of the election (see
	// redlock.Lock.Token). Pass it with every write the leader makes, to
	// a store that refuses tokens lower than the highest it has seen:
	// that is what protects the store from a leader that acts after its
	// term ended (a long pause). 0 when the client has fencing off.
	Token uint64
	// ID and Metadata are the identity the term was published with
	// (Config.Lease.ID and Config.Lease.Metadata).
	ID       string
	Metadata map[string]string
	// Start is when the term began (after the acquisition), with a
	// monotonic clock reading.
	Start time.Time

	l *lease.Lease
}

// ValidUntil is the end of the term's validity: no other candidate can be
// elected before it unless this term is released. It moves forward with
// every refresh. The term's context is cancelled Config.Lease.SafetyMargin
// before it at the latest, unless the term is refreshed before (that is
// when [Term.Held] turns false).
func (t Term) ValidUntil() time.Time {
	if t.l == nil {
		return time.Time{}
	}
	return t.l.ValidUntil()
}

// Held reports whether the term still lasts, checking its deadline by the
// local clock on every call (lease.Lease.Held).
func (t Term) Held() bool { return t.l != nil && t.l.Held() }

// term is the elector's state of one term.
type term struct {
	Term
	value  string // the lease's value: the term as observers see it
	ctx    context.Context
	cancel context.CancelCauseFunc

	elected chan struct{} // closed when OnElected returned (at once when none)
	over    chan struct{} // closed when the term was handed over (released)
	demoted chan struct{} // closed when OnDemoted returned (at once when none)

	// Set before over is closed:
	releaseErr error     // the release's result
	endedAt    time.Time // when the handover began
	validEnd   time.Time // the validity the term had then
}

func newTerm(l *lease.Lease) *term {
	h := l.Holder()
	return &term{
		Term:    Term{Token: l.Token(), ID: h.ID, Metadata: h.Metadata, Start: time.Now(), l: l},
		value:   h.Raw,
		elected: make(chan struct{}),
		over:    make(chan struct{}),
		demoted: make(chan struct{}),
	}
}

// leader is the term as observers see it.
func (t *term) leader() observer.Leader {
	vu := t.l.ValidUntil()
	return observer.Leader{ID: t.ID, Metadata: t.Metadata, Token: t.Token,
		Remaining: max(0, time.Until(vu)), Expires: vu, Value: t.value}
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
