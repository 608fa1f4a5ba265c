package observer

import "errors"

// Sentinel errors. Errors returned by this package wrap one of them, or
// one of redlock's (redlock.ErrClosed, redlock.ErrInvalidArgument,
// redlock.ErrInvalidConfig for a bad [Config]), or the caller's context
// error.
var (
	// ErrNoLeader: a majority of nodes answered and no value is held on a
	// majority of them: nobody leads (the key is free, expiring, or
	// contended).
	ErrNoLeader = errors.New("observer: no leader")

	// ErrUnknown: fewer than a majority of nodes answered (or could vote:
	// quarantined nodes do not count), so whether somebody leads cannot be
	// told. The message says how many answered and why the others did not.
	ErrUnknown = errors.New("observer: leader unknown")
)
