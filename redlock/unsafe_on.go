//go:build redlease_unsafe

package redlock

import (
	"time"

	"github.com/redlease/redlease/internal/unsafeopt"
)

// guardsOff lists the safety guards a negative control turned off
// (internal/unsafeopt, docs/design.md §7.3). Only a build with the
// redlease_unsafe tag (the negative controls, the fault suite, the
// simulator) can turn any off.
type guardsOff struct{ off unsafeopt.Off }

func (g guardsOff) replicationIDCheck() bool  { return g.off.ReplicationIDCheck }
func (g guardsOff) incarnationToken() bool    { return g.off.IncarnationToken }
func (g guardsOff) counterFromZero() bool     { return g.off.CounterFromZero }
func (g guardsOff) fastPathMinority() bool    { return g.off.FastPathMinority }
func (g guardsOff) noSettle() bool            { return g.off.NoSettle }
func (g guardsOff) clockSanity() bool         { return g.off.ClockSanity }
func (g guardsOff) noRestore() bool           { return g.off.NoRestore }
func (g guardsOff) restoreLate() bool         { return g.off.RestoreLate }
func (g guardsOff) counterTTL() time.Duration { return g.off.CounterTTL }

// SetUnsafe turns the guards of off off in cfg: a Client made from it runs
// without them, and so do the leases and electors built on it (they read
// them back with [UnsafeOf]). For negative controls only; it exists only
// in a build with the redlease_unsafe tag.
func SetUnsafe(cfg *Config, off unsafeopt.Off) { cfg.unsafeOff = guardsOff{off} }

// UnsafeOf returns the guards a negative control turned off for c
// ([SetUnsafe]); the zero Off in every other use.
func UnsafeOf(c *Client) unsafeopt.Off { return c.cfg.unsafeOff.off }
