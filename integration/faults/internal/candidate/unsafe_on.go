//go:build redlease_unsafe

package main

import (
	"github.com/redlease/redlease/internal/unsafeopt"
	"github.com/redlease/redlease/redlock"
)

// noReplIDCheck turns the quarantine's replication-ID check off
// (--no-replication-id-check, a negative control): a master that failed
// back after a full resync votes at once.
func noReplIDCheck(cfg *redlock.Config) error {
	redlock.SetUnsafe(cfg, unsafeopt.Off{ReplicationIDCheck: true})
	return nil
}
