//go:build !redlease_unsafe

package unsafetest

import (
	"testing"

	"github.com/redlease/redlease/internal/unsafeopt"
	"github.com/redlease/redlease/redlock"
)

// Build reports whether this build has the switches (the redlease_unsafe
// tag).
const Build = false

// TurnOff fails t when off turns a guard off: this build has no switch.
func TurnOff(t testing.TB, _ *redlock.Config, off unsafeopt.Off) {
	t.Helper()
	if off != (unsafeopt.Off{}) {
		t.Fatalf("this test turns guards off (%+v): run it with -tags redlease_unsafe", off)
	}
}

// Set panics when off turns a guard off: this build has no switch (the
// simulator's TestMain checks [Build] first).
func Set(_ *redlock.Config, off unsafeopt.Off) {
	if off != (unsafeopt.Off{}) {
		panic("unsafetest: turning guards off needs -tags redlease_unsafe")
	}
}
