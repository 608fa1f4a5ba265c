//go:build !redlease_unsafe

package lease

import "github.com/redlease/redlease/redlock"

// noRefreshBudget reports whether a negative control turned off the lease scheduler's token bucket
// for client (internal/unsafeopt). A build without the redlease_unsafe tag
// has no switch: never.
func noRefreshBudget(*redlock.Client) bool { return false }

// extraPermit reports whether a negative control made semaphores take
// one permit too many for client (internal/unsafeopt). Never without the
// redlease_unsafe tag.
func extraPermit(*redlock.Client) bool { return false }
