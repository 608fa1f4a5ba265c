//go:build !redlease_unsafe

package unsafetest

import (
	"github.com/redlease/redlease/internal/unsafeopt"
	"github.com/redlease/redlease/redlock"
)

// Build reports whether this build has the switches (the redlease_unsafe
// tag).
const Build = false

// Set panics when off turns a guard off: this build has no switch (the
// simulator's TestMain checks [Build] first).
func Set(_ *redlock.Config, off unsafeopt.Off) {
	if off != (unsafeopt.Off{}) {
		panic("unsafetest: turning guards off needs -tags redlease_unsafe")
	}
}
