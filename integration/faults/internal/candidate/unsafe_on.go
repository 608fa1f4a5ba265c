//go:build redlease_unsafe

package main

import (
	"github.com/redlease/redlease/internal/unsafeopt"
	"github.com/redlease/redlease/redlock"
)

// noReplIDCheck turns the quarantine's replication-ID check off
// (--no-replication-id-check, a negative control): a master that failed
// back after a full resync votes at once. The Function library's
// incarnation token, which also catches the full resync (a new loaded
// copy), is turned off with it.
func noReplIDCheck(cfg *redlock.Config) error {
	redlock.SetUnsafe(cfg, unsafeopt.Off{ReplicationIDCheck: true, IncarnationToken: true})
	return nil
}

// permitsPlusOne makes a semaphore take its permits among K+1 keys
// (--unsafe-permits-plus-one, a negative control): K+1 hold at once.
func permitsPlusOne(cfg *redlock.Config) error {
	redlock.SetUnsafe(cfg, unsafeopt.Off{PermitsPlusOne: true})
	return nil
}
