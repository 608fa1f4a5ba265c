// Package fence refuses a stale leader's writes at the resource: a guard
// keeps, per resource, the highest fencing token it has accepted, and
// applies a write with token t only if t is not below it, raising it to t
// in the same atomic step as the write. A token equal to the highest is
// the same term (a leader writes many times); a lower one is a holder
// whose term ended (a long pause, a stalled VM): the write is refused with
// a [*StaleTokenError] that names both tokens and matches [ErrStaleToken].
//
// Tokens come from redlock/lease/election (election.Term.Token; the
// term's context carries it, see [TokenFrom]; `redlease run` gives its
// child REDLEASE_TOKEN, see [TokenFromEnv]). They are strictly increasing
// across terms but not dense: guards compare them, never count them.
//
// The guards:
//   - [Redis]: SET, DEL, HSET and the user's own scripts ([NewScript]) on a
//     resource key, each one script call that checks and raises the token
//     kept beside the key (same hash slot: works on a Redis Cluster).
//   - [SQL]: a database/sql transaction that first raises the resource's
//     token row (insert if missing) only if the token is not below it, then
//     runs the caller's statements; PostgreSQL and SQLite ([Dialect]).
//   - [Local]: for a server that owns its state in memory: the check and
//     the write behind one lock per resource; [Middleware] puts it in
//     front of an http.Handler (409 with the highest token), and
//     [Transport] / [SetHeaders] send the token from the client.
//
// What a guard protects, and what it does not: a token proves order, not
// ownership. A guard makes a stale leader's write fail once a newer term
// has written through the same guard; it cannot stop a write that does
// not go through it, nor a stale write made before the newer term's
// first fenced write. docs/fencing.md tells the whole path from election
// to resource; docs/design.md §3.4 how tokens are made.
package fence
