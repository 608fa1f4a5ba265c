package lease

import (
	"errors"

	"github.com/redlease/redlease/redlock"
)

// Sentinel errors. Errors returned by this package wrap one of them (or one
// of redlock's), so callers test with errors.Is.
var (
	// ErrLeaseLost: the lease ended before it was released, because it
	// could not be refreshed before its local deadline (ValidUntil minus
	// SafetyMargin), or because a majority of nodes no longer held it. The
	// error returned by [Lease.Err] wraps it together with the reason,
	// usually the last refresh error (a *redlock.QuorumError).
	ErrLeaseLost = errors.New("lease: lost")

	// ErrReleased: the lease was ended by [Lease.Release].
	ErrReleased = errors.New("lease: released")

	// ErrInvalidConfig: a [Config] is invalid, or does not fit the
	// redlock.Client it is used with. The message names the bad values.
	ErrInvalidConfig = errors.New("lease: invalid config")
)

// Errors of redlock that this package returns as they are; they are the
// same values as redlock's, so errors.Is matches either name.
var (
	// ErrNotAcquired: [Acquire] or [TryAcquire] did not get the lease.
	ErrNotAcquired = redlock.ErrNotAcquired

	// ErrNoHolder: [Inspect] found no value held by a majority of nodes.
	ErrNoHolder = redlock.ErrNoHolder
)
