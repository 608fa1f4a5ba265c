// Package unsafeopt turns safety guards of the library off, for the
// negative controls of its safety tests only: a control shows that a
// checker catches the violation its guard prevents. Nothing outside this
// module can import it, and no exported name of the public packages
// carries these switches.
//
// docs/design.md §7.3 lists the controls and the invariant each one breaks.
package unsafeopt

import "time"

// Off lists the guards a control may turn off. The zero value turns none
// off.
type Off struct {
	// ReplicationIDCheck: the quarantine compares a node's run_id with its
	// marker's, but not its replication ID, so a master whose dataset was
	// replaced while its process kept running (a failback after a full
	// resync) votes at once.
	ReplicationIDCheck bool

	// CounterFromZero: a fencing counter that expired starts again from 0
	// instead of from the node's high-water mark, so a token after its
	// expiry can repeat an earlier one.
	CounterFromZero bool

	// FastPathMinority: the acquisition hands its token out at once when
	// fewer than a majority of the yes-nodes replied that counter (the
	// fast path of fencing without its majority rule), skipping the
	// write-back.
	FastPathMinority bool

	// NoSettle: an acquisition leaves the counter of a spare granted late
	// above its token as it is (no settle.lua), so that a majority read
	// with enough of the token's nodes silent reports that counter.
	NoSettle bool

	// NoHandoverWait: an elector (package election) releases a term as
	// soon as its context is cancelled, without waiting for OnElected to
	// return, so that the next leader's work can overlap the last one's.
	NoHandoverWait bool

	// NoRefreshBudget: the lease scheduler refreshes every lease that is
	// due, without the token bucket that keeps refreshes within twice the
	// steady rate, so failed refreshes are retried at every RetryInterval
	// (a retry storm under a fault).
	NoRefreshBudget bool

	// CounterTTL, when positive, replaces the fencing counters' TTL (ten
	// times MaxTTL) so that a test sees counters expire. It weakens no
	// guard: tokens must stay strictly increasing with any value.
	CounterTTL time.Duration
}

// setRedlock is registered by package redlock (see Register).
var setRedlock func(cfg any, off Off)

// Register is called once, by package redlock's init, with the function
// that records off in a *redlock.Config.
func Register(set func(cfg any, off Off)) { setRedlock = set }

// Apply records off in cfg, a *redlock.Config: a Client made from it runs
// with those guards off, and so do the leases and electors built on it
// (internal/redlockx.UnsafeOff reads them back).
func Apply(cfg any, off Off) {
	if setRedlock == nil {
		panic("unsafeopt: package redlock is not linked in")
	}
	setRedlock(cfg, off)
}
