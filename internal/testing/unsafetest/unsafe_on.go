//go:build redlease_unsafe

package unsafetest

import (
	"github.com/redlease/redlease/internal/unsafeopt"
	"github.com/redlease/redlease/redlock"
)

// Build reports whether this build has the switches (the redlease_unsafe
// tag).
const Build = true

// Set turns the guards of off off in cfg, for a caller without a
// testing.TB (the simulator, whose TestMain checks [Build]).
func Set(cfg *redlock.Config, off unsafeopt.Off) { redlock.SetUnsafe(cfg, off) }
