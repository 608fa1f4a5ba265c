// Package redlock implements the Redlock algorithm on N independent Redis
// masters: a lock is held when a majority (N/2+1) of nodes granted it and the
// time the acquisition took, plus an allowance for clock drift, leaves
// validity on the TTL.
//
// It is the bottom layer of redlease: package lease keeps a [Lock] alive,
// and packages observer and election build on lease. docs/design.md
// explains the mechanisms (§4: fan-out, fencing, quarantine, Redis
// Cluster), the safety invariants S1-S8 cited below (§2), and the model
// they hold under (§3):
// https://github.com/redlease/redlease/blob/main/docs/design.md
//
// # Guarantees
//
// While [Lock.Held] is true, no other client of these nodes holds the same
// key (docs/design.md S1), provided that:
//   - the servers' and this process's clocks advance at nearly the same
//     rate (the drift allowance is TTL*DriftFactor + 2ms), and no process
//     pauses longer than that allowance without checking Held again;
//   - a node that loses its data does not vote again before every lock it
//     may have granted has expired: redlock enforces this with a quarantine
//     of MaxTTL per node (a marker that records the server's run_id and
//     replication ID; docs/design.md §4.7), unless turned off;
//   - keys are never evicted: New refuses nodes with an evicting
//     maxmemory-policy, and a node that turns evicting later (CONFIG SET,
//     a restart with another configuration, a node that was down at
//     start-up) stops counting within 5s of the change; keys it evicted in
//     between are not covered (set noeviction on the servers themselves).
//
// Held is checked against a local deadline on the monotonic clock, never
// against a network reply (S2). An acquire or extend counts only with a
// majority within validity (S3); Extend never re-creates an expired key
// (S4). Every acquisition carries a fencing token strictly greater than
// every token of the same key handed out before it started (S5), which is
// what protects a resource when the assumptions above fail: a paused holder
// that wakes past its deadline still carries its old token, and a resource
// that refuses lower tokens refuses it. Two nodes that are one server count
// once (S7). Every attempt uses a fresh random value, and a failed attempt
// is undone on every node with its own bounded context (S8).
//
// Not guaranteed: mutual exclusion against a holder that ignores Held, or
// when a majority of nodes lose their data together and quarantine is off;
// fencing only protects resources that check tokens.
//
// # Errors
//
// Errors wrap the sentinels of errors.go; a failed quorum is a
// *[QuorumError] with every node's answer. A node's error reply is
// classified where it arrives, by its code (the reply's first word, not its
// wording), as final when a retry meets it again (WRONGTYPE, NOPERM, wrong
// credentials, a TTL above the node's MaxTTL) or not; [IsFinal] applies
// that to a whole attempt, [Client.Acquire] stops on a final error instead
// of retrying until its context ends, and refused credentials or
// permissions match [ErrAccessDenied].
//
// # Logs and events
//
// Config.Logger takes an hclog.Logger, or a *slog.Logger through
// [SlogLogger]; nil is silent. Records are one event each, on one line,
// with errors as attributes and stable keys (docs/observability.md).
// Config.Hooks receives a typed [Event] for every acquisition attempt,
// extension, release and node error, and for the lost leases, terms and
// leader changes of the packages built on the Client; contrib/prometheus
// and contrib/otel turn them into metrics.
//
// # Performance
//
// Requests go to all nodes at once; a call returns as soon as a majority
// answered yes, or as soon as a majority is out of reach, and never waits
// longer than NodeTimeout for any node, whatever the go-redis client's own
// timeouts. An acquisition, fencing token included, costs one round trip to
// the fastest majority while the nodes' counters agree (one more when they
// disagree, after failed attempts or a restart: docs/design.md §4.5).
//
// Two go-redis options change the cost of a call, and the library works
// with any setting of both:
//   - ContextTimeoutEnabled on a single node's *redis.Client lets redlock
//     send its requests from the caller's goroutine, since go-redis then
//     cuts a request at its deadline itself (without it, each request runs
//     in a goroutine of its own so that NodeTimeout can cut the wait).
//   - Protocol: 2 saves go-redis' check for RESP3 push notifications before
//     every command (about a tenth of the client's CPU in a cycle here);
//     redlease uses no RESP3 feature.
package redlock
