// Package lease keeps a Redlock lock on a key for as long as its holder
// wants it, refreshing it in the background, and tells the holder before the
// lock's validity ends when it could not keep it.
//
// It is the layer between redlock (the algorithm, below) and observer and
// election (above). docs/design.md §5 explains the refresh scheduler, the
// batched refresh and the local hard deadline (invariant S2):
// https://github.com/redlease/redlease/blob/main/docs/design.md
//
// # Lifecycle
//
// Acquire. [Acquire] waits until it holds the key on a majority of the
// redlock.Client's nodes (retrying with jittered delays, woken at once by
// the release notice of the previous holder); [TryAcquire] makes one
// attempt. The value stored in the key carries the holder's identity
// (Config.ID, Config.Metadata) next to a random nonce, so that
// redlock.Client.Inspect and observers can tell who holds it (the
// redlock.Holder they return decodes it; the format is
// "rl1:<nonce>:id=<ID>&m.<key>=<value>...", escaped as in a URL query).
// An acquisition publishes a change notice on the key's notice channel
// ("<key>:notice").
//
// Refresh. The leases of one redlock.Client share one scheduler (one
// goroutine, from the Client's first lease to its last, not one per
// lease) that extends the keys on the nodes every RenewInterval, and after
// a failure every RetryInterval. Leases due together are extended together
// (redlock.Client.ExtendAll: one script call per node per 256 leases; a
// lease may be refreshed up to RenewInterval/10 early to join a batch).
// Under overload it serves the nearest deadline first and keeps refreshes
// within twice the steady rate. A refresh returns as soon as a majority agreed, and waits for late replies
// up to RetryInterval (a busy process reads its replies late). Each
// success moves [Lease.ValidUntil] forward: start of the refresh + TTL -
// drift, on the local monotonic clock.
//
// Loss. The lease ends at ValidUntil - SafetyMargin by a
// local timer, unless a refresh succeeded before: it never waits for a
// reply to decide that time is up, and a refresh that succeeds later does
// not bring it back. It also ends as soon as a majority of nodes reports the
// keys are no longer ours. Then [Lease.Context] is cancelled, with
// context.Cause(Context()) an error matching [ErrLeaseLost] that says why, and the keys are deleted in the
// background. [Lease.Held] checks the deadline itself on every call, so it
// turns false on time even if the scheduler is late; the deadline timer is
// the lease's own, so the context is cancelled on time too.
//
// Release. [Lease.Release] ends the lease with [ErrReleased], takes it out
// of the scheduler, then deletes the keys on every node (publishing a
// release notice that wakes waiters at once). It is idempotent and safe
// from any goroutine. Cancelling the context given to Acquire does the same,
// with the context's cause as the reason.
//
// # Semaphores
//
// With Config.Permits = K above 1, the key names a semaphore of K permits
// and a lease holds one of them: permit i is a lease of its own on its own
// key (permit 0 on the key itself, so a plain lease on the key is its
// permit 0; permit i on "<key>:permit:<i>"), held, refreshed, fenced and
// lost exactly as described here, so at most K holders hold at once.
// [Lease.Holder] says which permit (Key, Permit); [Lease.Token] orders the
// holders of that permit only. Acquire starts at a random permit, tries
// each in turn, and then waits for a release notice, which names the
// permit freed. Every client of a semaphore should use the same K.
// Lowering K from K0 to K1: clients with K1 take permits below K1 only,
// but a holder of a permit at or above K1 keeps it until it releases,
// stops or loses it; until then up to K0 hold at once, and at most K1 once
// they have all ended (docs/design.md §5.3).
//
// # Guarantees
//
// While Held is true (and while the lease's Context is not cancelled, up to the moment the timer
// fires), no other client of the same nodes holds the key, under redlock's
// assumptions (clocks advancing at nearly the same rate, a process pause
// shorter than the drift allowance plus SafetyMargin; see package redlock).
// A holder that may act after its lease ended (a long GC or VM pause
// between a check of Held and the action) is stopped only by fencing: pass
// [Lease.Token] to the protected resource and have it refuse lower tokens.
//
// All of a lease's goroutines have returned once Release returns (a
// refresh of a batch in flight may finish later: it cannot revive the
// lease, and the client's Close waits for it); a lease that was lost or
// whose context ended stops by itself after deleting its keys (bounded by
// the client's NodeTimeout). The scheduler's goroutine returns once its
// client has no lease left.
package lease
