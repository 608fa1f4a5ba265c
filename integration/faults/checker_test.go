package faults

import (
	"time"
)

// The checkers live in internal/testing/checker, shared with the package tests
// and the simulator's explorer (integration/faults/sim).

// c4Slack is how late a holder may see its term end after the term's
// validity (C4): scheduling on a loaded two-core machine under -race. 20ms
// until 2026-11-28, when clean-clone make test runs (load ~10) saw holders
// 21.8ms and 36.6ms late; 45ms until CI (its fault suite twice as slow as
// here) saw one 52.2ms late. Its control, whose candidates ignore their
// deadline and believe a quarter TTL (250ms) past OnDemoted, is late by
// 300ms or more: the slack stays well below that.
const c4Slack = 150 * time.Millisecond

// termKey names a term: its holder's process and its start.
type termKey struct {
	pid int
	ts  int64
}
