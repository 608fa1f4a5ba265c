//go:build redlease_unsafe

package election

import "github.com/redlease/redlease/redlock"

// noHandoverWait reports whether a negative control turned off the wait for OnElected before a term is released
// for client (internal/unsafeopt, redlock.SetUnsafe).
func noHandoverWait(client *redlock.Client) bool { return redlock.UnsafeOf(client).NoHandoverWait }
