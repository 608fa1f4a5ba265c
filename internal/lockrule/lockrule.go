// Package lockrule holds the rules of package redlock on the numbers of a
// lock that the packages built on it apply too: the defaults of
// redlock.Config's durations, the clock-drift allowance (docs/design.md
// S3), the bounds of a TTL, and how many locks one extend batch carries.
// Package redlock applies them to every lock; lease, election and the CLI
// check their own settings by them, before they hold a lock, so that no
// package re-derives them. It imports nothing of this module.
package lockrule

import (
	"fmt"
	"time"
)

// Defaults of redlock.Config, documented on its fields.
const (
	DefaultNodeTimeout = 50 * time.Millisecond
	DefaultDriftFactor = 0.01
	DefaultMaxTTL      = 30 * time.Second
)

// MinDrift is added to every drift allowance (docs/design.md S3): the
// clock resolution and scheduling slack that a drift factor alone would
// miss on short TTLs.
const MinDrift = 2 * time.Millisecond

// MaxExtendBatch is how many locks one extend_many script call of
// redlock.Client.ExtendAll carries at most: ExtendAll splits larger sets
// into calls of this size, so that no single call holds a server for long.
// The lease scheduler sizes its batches and its token bucket by it.
const MaxExtendBatch = 256

// Drift is the clock-drift allowance deducted from a lock of ttl with
// drift factor factor: a lock acquired at start is believed held until
// start + ttl - Drift(ttl, factor).
func Drift(ttl time.Duration, factor float64) time.Duration {
	return time.Duration(float64(ttl)*factor) + MinDrift
}

// TTLProblem says why a client with nodeTimeout, maxTTL and factor would
// refuse ttl for a lock (not positive, not a whole number of
// milliseconds, above maxTTL, not above nodeTimeout*2 + drift), naming
// the values; "" when it accepts it. Callers wrap it in their sentinel
// error (redlock.ErrInvalidArgument).
func TTLProblem(ttl, nodeTimeout, maxTTL time.Duration, factor float64) string {
	switch {
	case ttl <= 0:
		return fmt.Sprintf("TTL (%s) must be positive", ttl)
	case ttl%time.Millisecond != 0:
		return fmt.Sprintf("TTL (%s) must be a whole number of milliseconds", ttl)
	case ttl > maxTTL:
		return fmt.Sprintf("TTL (%s) is above MaxTTL (%s)", ttl, maxTTL)
	case ttl <= nodeTimeout*2+Drift(ttl, factor):
		return fmt.Sprintf("TTL (%s) must exceed NodeTimeout*2 + drift (%s)", ttl, nodeTimeout*2+Drift(ttl, factor))
	}
	return ""
}
