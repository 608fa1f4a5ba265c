//go:build !redlease_unsafe

package redlock

import "time"

// guardsOff lists the safety guards a negative control turned off
// (internal/unsafeopt, docs/design.md §7.3). A build without the
// redlease_unsafe tag has no switch: every guard is on, and these
// constant answers compile away.
type guardsOff struct{}

func (guardsOff) replicationIDCheck() bool  { return false }
func (guardsOff) incarnationToken() bool    { return false }
func (guardsOff) counterFromZero() bool     { return false }
func (guardsOff) fastPathMinority() bool    { return false }
func (guardsOff) noSettle() bool            { return false }
func (guardsOff) clockSanity() bool         { return false }
func (guardsOff) noRestore() bool           { return false }
func (guardsOff) restoreLate() bool         { return false }
func (guardsOff) counterTTL() time.Duration { return 0 }
