//go:build redlease_unsafe

package redlock

import (
	"testing"

	"github.com/redlease/redlease/internal/unsafeopt"
)

// turnOff turns the guards of off off in cfg, for a negative control
// (SetUnsafe; this build has the redlease_unsafe tag).
func turnOff(t testing.TB, cfg *Config, off unsafeopt.Off) {
	t.Helper()
	SetUnsafe(cfg, off)
}
