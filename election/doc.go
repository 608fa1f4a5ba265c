// Package election elects one leader among candidates on Redis, on top of
// a lease (package lease) held on a majority of a redlock.Client's nodes.
//
// It is the top layer of redlease (redlock, lease, observer, election).
// docs/design.md §6.1 explains terms and the handover, §2 the invariants
// (S1: one leader at a time; S5: terms' tokens increase) and §3 the
// assumptions they hold under:
// https://github.com/redlease/redlease/blob/main/docs/design.md
//
// Each candidate makes an [Elector] with [New] and calls [Elector.Run],
// which campaigns until its context ends. The candidate that acquires the
// election's lease begins a term: Config.OnElected runs, in its own
// goroutine, under a context that lives exactly as long as the term; the
// lease refreshes itself; the others stand by. When the term ends, its
// context is cancelled first (always before the term's validity ends), the
// elector waits for OnElected to return, then releases the lease, and only
// then calls Config.OnDemoted and lets another candidate be elected.
//
// # Lifecycle of a term
//
//  1. The lease is acquired (a fencing token strictly above every earlier
//     term's). IsLeader turns true; an event of kind [EventElected] is
//     sent and OnElected starts (once the callbacks queued before it
//     returned).
//  2. The term ends when [Elector.Resign] is called, when Run's context
//     ends, when OnElected panics, or when the lease is lost (it could not
//     be refreshed before its deadline). Its context is cancelled with
//     the reason as its cause; IsLeader turns false at that moment.
//  3. The elector waits for OnElected to return: at most until the
//     validity the term had then runs out (it keeps refreshing the lease
//     meanwhile, so a new leader cannot start while the old one's work
//     winds down; an OnElected that ignores its context is released
//     without after that, logged, and reported by [Elector.Healthy]).
//  4. The lease is released on every node, which publishes a notice that
//     wakes the standbys: after a Resign, the next candidate is elected
//     within milliseconds. After a crash (no release), the standbys take
//     over once the key lapses: within TTL (plus one RetryDelay at worst).
//  5. An event of kind [EventDemoted] is sent and OnDemoted is called,
//     with the cause.
//
// The elector does not campaign again while the previous term's OnElected
// or OnDemoted is still running, and stands aside for ResignDelay after a
// Resign or a panic.
//
// # Steering
//
// Resign(ctx, id) hands the term over to the candidate id: the others
// stand aside for Config.HandoverWindow while id takes over. Candidates
// publish a registry record (ID, Config.Priority, since when); a higher
// priority goes first at a release, and with Config.YieldAfter a leader
// hands over to it. Config.Leaderships caps how many elections the
// electors of a process lead at once. None of this weakens the guarantees
// below: it only delays attempts (docs/design.md §6.4).
//
// # Notifications, goroutines and callbacks
//
// A candidate learns of its terms, and of the leader it sees, two ways
// that carry the same events in the same order, each once: the
// callbacks of its [Config], and the [Elector.Events] channel ([Event], of kinds
// [EventElected], [EventDemoted] and [EventLeaderChanged]). Standbys that
// never campaign use observer.Observer.Watch; metrics and logs use the
// client's hooks (redlock.Config.Hooks), which the elector reports the same events to.
// docs/notifications.md says which to use for what.
//
// Run's loop runs on the goroutine that called Run. OnDemoted and
// OnLeaderChange run in one callback goroutine of the elector, one at a
// time, in the order the events happened; they should return promptly.
// That goroutine starts OnElected, in a goroutine of its own per term, in
// its turn. A panic in any callback
// is recovered; in OnElected it ends the term, and the demotion cause
// matches [ErrCallbackPanicked] (its message has the value and the
// stack). A blocked callback never stops the elector from ending
// a term, releasing it, sending events, or returning from Run (which waits
// at most StopTimeout for callbacks). [Elector.Events] is a buffered
// channel that the elector never waits on: events that do not fit are
// dropped, each with a warning in the log.
//
// # Guarantees
//
// While IsLeader is true and while OnElected's context is alive, no other
// candidate of the same nodes leads, under the assumptions of package
// redlock (clocks advancing at nearly the same rate; no process pause
// longer than the drift allowance plus SafetyMargin between a check and an
// action). Terms' tokens strictly increase. What a paused or partitioned
// leader does after its term ended is stopped only by fencing: pass
// [Term.Token] to the resources the leader writes, and have them refuse
// lower tokens.
//
// An Elector campaigns once: Run may be called once. Health checks are
// built in ([Elector.Healthy]; [HealthCheck] for readiness, [LivenessCheck]
// for liveness); measurements (terms, attempts, refreshes, node errors) go
// to the Hooks of the client (redlock.Config.Hooks, docs/observability.md).
// Package observer follows an election without campaigning
// (observer.Observer.Leader reads who leads). Who leads is a
// redlock.Holder everywhere ([Event].Leader, the Holder that [Term]
// embeds), and redlock.ErrNoHolder says nobody does.
//
// # Configuration
//
// [Config] holds the lease.Config of the terms' leases (Config.Lease: TTL,
// refresh timing, safety margin, ID, metadata, logger, with their defaults
// and rules), and the elector's own settings beside it.
package election
