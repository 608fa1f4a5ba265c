// Package unsafeopt lists the safety guards of the library that a negative
// control of its safety tests turns off: a control shows that a checker
// catches the violation its guard prevents. The list is inert: only a build
// with the redlease_unsafe tag (the Makefile's tests, the fault suite's
// candidate, the simulator) has redlock.SetUnsafe, which records an Off in
// a redlock.Config, and redlock.UnsafeOf, which reads it back; a normal
// build of the library does not import this package and has no switch at
// all. Nothing outside this module can import it.
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

	// IncarnationToken: on a node that runs the Function library (FCALL),
	// a marker whose token for this version is not the loaded copy's (the
	// library was reloaded: a restart, a full resync, DEBUG RELOAD,
	// FUNCTION FLUSH) does not quarantine the node: the full check runs
	// and records the copy's token, so DEBUG RELOAD of an old RDB votes at
	// once.
	IncarnationToken bool

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

	// PermitsPlusOne: a semaphore of K permits (lease.Config.Permits)
	// takes its permits among K+1 keys (an off-by-one in the permit
	// index), so K+1 holders can hold at once.
	PermitsPlusOne bool

	// ClockSanity: the replies' server TIME is not checked against the
	// monotonic clock, so a node whose clock jumped forward keeps counting
	// toward the validity of the locks held there until their deadline
	// (docs/design.md §6.5).
	ClockSanity bool

	// NoRestore: a lock whose copy a node lost is not restored there
	// while it is held (restore_many.lua, docs/design.md §4.3): it stays on
	// fewer nodes, and dies with the next node it loses.
	NoRestore bool

	// RestoreLate: a lost copy is restored even once the lock's local
	// deadline has passed (the restore is still sent only after an
	// extension that succeeded).
	RestoreLate bool

	// CounterTTL, when positive, replaces the fencing counters' TTL (ten
	// times MaxTTL) so that a test sees counters expire. It weakens no
	// guard: tokens must stay strictly increasing with any value.
	CounterTTL time.Duration
}
