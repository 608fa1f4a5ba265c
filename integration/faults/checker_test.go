package faults

import (
	"time"
)

// The checkers live in internal/testing/checker, shared with the package tests
// and the simulator's explorer (integration/faults/sim).

// c4Slack is how late a holder may see its term end after the term's
// validity (C4): scheduling on a loaded two-core machine under -race. 20ms
// until 2026-11-28, when a clean-clone make test (load ~10) saw a holder
// 21.8ms late in a cluster scenario. Its control, whose candidates ignore
// their deadline (they believe until OnDemoted), is late by about the
// SafetyMargin, TTL/20 = 50ms (54.5ms measured): the slack must stay well
// below that.
const c4Slack = 30 * time.Millisecond

// termKey names a term: its holder's process and its start.
type termKey struct {
	pid int
	ts  int64
}
