package faults

import (
	"time"
)

// The checkers live in internal/testing/checker, shared with the package tests
// and the simulator's explorer (integration/faults/sim).

// c4Slack is how late a holder may see its term end after the term's
// validity (C4): scheduling on a loaded two-core machine.
const c4Slack = 20 * time.Millisecond

// termKey names a term: its holder's process and its start.
type termKey struct {
	pid int
	ts  int64
}
