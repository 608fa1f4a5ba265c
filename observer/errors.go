package observer

import "errors"

// Sentinel errors. Errors returned by this package wrap this one, or one
// of redlock's (redlock.ErrNoHolder when nobody leads, redlock.ErrClosed,
// redlock.ErrInvalidArgument for a bad argument or [Config]), or the
// caller's context error.
var (
	// ErrUnknown: fewer than a majority of nodes answered (or could vote:
	// quarantined nodes do not count), so whether somebody leads cannot be
	// told. The message says how many answered and why the others did not.
	ErrUnknown = errors.New("observer: leader unknown")
)
