//go:build redlease_unsafe

package lease

import "github.com/redlease/redlease/redlock"

// noRefreshBudget reports whether a negative control turned off the lease scheduler's token bucket
// for client (internal/unsafeopt, redlock.SetUnsafe).
func noRefreshBudget(client *redlock.Client) bool { return redlock.UnsafeOf(client).NoRefreshBudget }

// extraPermit reports whether a negative control made semaphores take
// one permit too many for client (internal/unsafeopt, redlock.SetUnsafe).
func extraPermit(client *redlock.Client) bool { return redlock.UnsafeOf(client).PermitsPlusOne }
