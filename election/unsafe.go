//go:build !redlease_unsafe

package election

import "github.com/redlease/redlease/redlock"

// noHandoverWait reports whether a negative control turned off the wait for OnElected before a term is released
// for client (internal/unsafeopt). A build without the redlease_unsafe tag
// has no switch: never.
func noHandoverWait(*redlock.Client) bool { return false }
