package lease

import (
	"errors"
	"fmt"

	"github.com/redlease/redlease/redlock"
)

// Sentinel errors. Errors returned by this package wrap one of them (or one
// of redlock's), so callers test with errors.Is.
var (
	// ErrLeaseLost: the lease ended before it was released, because it
	// could not be refreshed before its local deadline (ValidUntil minus
	// SafetyMargin), or because a majority of nodes no longer held it. The
	// cause of [Lease.Context] (context.Cause) wraps it together with the reason,
	// usually the last refresh error (a *redlock.QuorumError).
	ErrLeaseLost = errors.New("lease: lost")

	// ErrReleased: the lease was ended by [Lease.Release].
	ErrReleased = errors.New("lease: released")
)

// Errors of redlock that this package returns: [Acquire] and [TryAcquire]
// fail with redlock.ErrNotAcquired when they did not get the lease, and an
// invalid [Config] is reported as an error wrapping
// redlock.ErrInvalidArgument that starts "lease.Config:" and names the bad
// values.
var errInvalidConfig = fmt.Errorf("%w: lease.Config", redlock.ErrInvalidArgument)
