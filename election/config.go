package election

import (
	"context"
	"fmt"
	"time"

	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// defaultEventBuffer is the default of Config.EventBuffer.
const defaultEventBuffer = 64

// Config tunes an [Elector]. The zero value of every field means its
// default, documented on the field. [New] copies the Config (and its
// Lease.Metadata): changing it afterwards has no effect. A Config may be
// shared by goroutines as long as none modifies it.
type Config struct {
	// Lease configures the lease each term holds, with the defaults and
	// rules of lease.Config. In an election its fields also mean:
	//
	//   - ID and Metadata: the candidate as observers and the other
	//     candidates see it while it leads (candidates of one election
	//     should have distinct IDs);
	//   - TTL: a leader that crashed is replaced at most TTL after its
	//     last refresh (plus one RetryDelay at worst);
	//   - SafetyMargin: how long before the term's validity ends the term
	//     is given up if it could not be refreshed (OnElected's context is
	//     cancelled then);
	//   - RetryDelay: also the mean time between two looks of a standby
	//     at the election when no change notice arrives, a random time in
	//     [RetryDelay/2, RetryDelay*3/2]. Change notices (a leader's
	//     release) wake standbys at once, and a standby also looks when
	//     the leader's key is due to lapse, so this is the fallback for
	//     lost notices. While no majority of nodes answers, the looks back
	//     off exponentially (doubling, with the same jitter) up to 8 x
	//     RetryDelay, and return to RetryDelay once a majority answers;
	//   - Logger: also receives the elector's logs, one record per event,
	//     with the stable keys of docs/observability.md (key, id, token,
	//     validity, elapsed, error), and its observer's. Default: the
	//     client's logger (redlock.Config.Logger). Measurements (terms, attempts,
	//     refreshes, node errors) go to the Hooks of the client
	//     (redlock.Config.Hooks).
	//
	// Default: the zero lease.Config (TTL 10s, ID "<hostname>-<pid>", see
	// its fields).
	Lease lease.Config

	// ResignDelay is how long after it resigned (or its OnElected
	// panicked) the elector stands aside before it campaigns again, so that
	// another candidate takes over. The default is longer than the longest
	// wait of a standby that missed the release notice. Default:
	// 2 x Lease.RetryDelay.
	ResignDelay time.Duration

	// HandoverWindow is how long, after a leader resigned to a named
	// successor ([Elector.Resign] with an ID), the other candidates stand
	// aside so that the successor is the one elected; after it, if the
	// successor did not take over, the election is the usual race. Each
	// candidate applies the window the leader announced, up to its own
	// Lease.TTL. Default: 4 x Lease.RetryDelay. docs/design.md §6.4.
	HandoverWindow time.Duration

	// Priority orders the candidates (higher first): of the candidates
	// waiting at a release, the ones that know of a live candidate with a
	// higher priority let it try first; with YieldAfter, a leader hands
	// over to such a candidate. Candidates publish it in their registry
	// record (with their ID and since when they campaign), which
	// observers and `redlease status` show. Default: 0.
	Priority int

	// YieldAfter, when set, makes a leader hand over (as Resign with an ID
	// does) to the candidate of the highest priority above its own that
	// has been campaigning for at least YieldAfter, once its own term is
	// YieldAfter old. A candidate yields only to a strictly higher
	// priority, so two never hand the leadership back and forth, and to
	// one campaign of a candidate at most once in 10 x max(YieldAfter,
	// TTL), so one that does not take over costs one handover. Default:
	// 0, never yield.
	YieldAfter time.Duration

	// AcceptResignRequests makes the leader honour the requests of
	// `redlease resign --to ID` (a notice on the election's channel naming
	// the leader's term and a successor), as if Resign was called with the
	// ID. Anyone who can PUBLISH on the nodes can send one: it can end a
	// term early, never give two leaders. Default: false, ignored.
	AcceptResignRequests bool

	// Leaderships, when set, caps how many elections the electors that
	// share it lead at once: at most cap(Leaderships). Make one per
	// process (make(chan struct{}, 10)) and give it to each of its
	// electors: a term takes a place for as long as it lasts, and an
	// elector that finds no place free does not campaign (it watches, and
	// tries again once one is), so that leaderships do not pile onto the
	// first process up. With N processes, a cap of E/(N-1) elections or
	// more lets the others take over while one is down; Priority with
	// YieldAfter brings them back to their preferred process after it.
	// The elector never sends on it or receives from it but to take and
	// free its place. Default: nil, no cap.
	Leaderships chan struct{}

	// StopTimeout bounds how long Run, once its context ended and its term
	// (if any) was handed over, waits for callbacks still running (an
	// OnElected that ignores its context, a blocked OnDemoted or
	// OnLeaderChange) before it returns without them; they keep running.
	// Default: Lease.TTL.
	StopTimeout time.Duration

	// EventBuffer is the capacity of the [Elector.Events] channel. Events
	// that do not fit are dropped, never waited for (each drop is logged
	// as a warning, with the count so far). Default: 64.
	EventBuffer int

	// OnElected, OnDemoted and OnLeaderChange are called as the elector's
	// terms begin and end and as the leader it sees changes; each is
	// optional (default: none). A panic in one is recovered (and, in
	// OnElected, ends the term); one that blocks does not stop the elector
	// from ending a term, releasing it, or returning from Run. They are
	// called in the order of the events of [Elector.Events], one at a time
	// by the elector's callback goroutine (OnElected is started by it, in a
	// goroutine of its own), so one that blocks delays the ones after it,
	// never the elector. docs/notifications.md compares them with the
	// other paths.
	//
	// OnElected is called when a term begins ([EventElected]), in a
	// goroutine of its own, once the callbacks before it returned,
	// with a context that lives exactly as long as the term: it is
	// cancelled when the term ends (Resign, Run's context ending, a panic
	// in OnElected, or the lease lost), always before the term's validity
	// ends, with the reason as its cause (context.Cause). Do the leader's
	// work in it, under that context, and return once it is cancelled:
	// the term is released, and another candidate can be elected, only
	// after OnElected returned (or, if it does not, once the validity the
	// term had when it ended has run out). Returning early does not end
	// the term; call [Elector.Resign] for that. The elector does not
	// campaign again while OnElected still runs. The context carries the
	// term's fencing token for the guards of package fence
	// (fence.TokenFrom), unless fencing is off (token 0).
	OnElected func(ctx context.Context, t Term)

	// OnDemoted is called once per term that began, after the term's
	// context was cancelled, after OnElected returned (or the term's
	// validity ran out) and after the term was released, with the reason
	// the term ended: an error matching ErrResigned, ErrCallbackPanicked,
	// lease.ErrLeaseLost, or the error (and cause) of Run's context when
	// it ended. It runs in the elector's
	// callback goroutine, in order with OnLeaderChange; the elector does
	// not campaign again until it returned.
	OnDemoted func(t Term, cause error)

	// OnLeaderChange is called for every change of leader the elector
	// sees ([EventLeaderChanged]), with the new leader, or the zero Holder
	// (empty Value) when nobody leads; the first call gives the state the
	// elector saw first. Its own terms are reported by OnElected instead
	// (the leader is then this elector). When no majority of nodes
	// answers, the leader is unknown and no call is made. It runs in the
	// elector's callback goroutine, in the order the changes were seen.
	OnLeaderChange func(l redlock.Holder)
}

// withDefaults fills in the defaults of the elector's own fields; c.Lease
// must have its defaults filled in already (New resolves it first).
func (c Config) withDefaults() Config {
	if c.ResignDelay == 0 {
		c.ResignDelay = 2 * c.Lease.RetryDelay
	}
	if c.StopTimeout == 0 {
		c.StopTimeout = c.Lease.TTL
	}
	if c.EventBuffer == 0 {
		c.EventBuffer = defaultEventBuffer
	}
	if c.HandoverWindow == 0 {
		c.HandoverWindow = 4 * c.Lease.RetryDelay
	}
	return c
}

// validate reports the first invalid setting, with its value, as an error
// wrapping redlock.ErrInvalidArgument ([New] returns it) among the
// elector's own fields. Zero values are valid (they mean defaults). New
// then checks the lease's fields, alone and against the client's settings
// (lease.Config.Resolve).
func (c Config) validate() error {
	switch {
	case c.Lease.Permits > 1:
		return fmt.Errorf("%w: Lease.Permits (%d): an election has one leader; a semaphore is lease.Acquire's", errInvalidConfig, c.Lease.Permits)
	case c.ResignDelay < 0:
		return fmt.Errorf("%w: ResignDelay (%s) must not be negative", errInvalidConfig, c.ResignDelay)
	case c.StopTimeout < 0:
		return fmt.Errorf("%w: StopTimeout (%s) must not be negative", errInvalidConfig, c.StopTimeout)
	case c.EventBuffer < 0:
		return fmt.Errorf("%w: EventBuffer (%d) must not be negative", errInvalidConfig, c.EventBuffer)
	case c.HandoverWindow < 0:
		return fmt.Errorf("%w: HandoverWindow (%s) must not be negative", errInvalidConfig, c.HandoverWindow)
	case c.YieldAfter < 0:
		return fmt.Errorf("%w: YieldAfter (%s) must not be negative", errInvalidConfig, c.YieldAfter)
	case c.Leaderships != nil && cap(c.Leaderships) == 0:
		return fmt.Errorf("%w: Leaderships has capacity 0: no election could be led (make(chan struct{}, n) with n >= 1, or nil for no cap)", errInvalidConfig)
	}
	return nil // the lease's fields: New's lease.Config.Resolve names them
}

// errInvalidConfig starts the errors of validate about the elector's own
// fields.
var errInvalidConfig = fmt.Errorf("%w: election.Config", redlock.ErrInvalidArgument)
