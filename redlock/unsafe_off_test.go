//go:build !redlease_unsafe

package redlock

import (
	"testing"

	"github.com/redlease/redlease/internal/unsafeopt"
)

// turnOff fails a test that turns a guard off: a build without the
// redlease_unsafe tag has no switch (unsafe.go). make test passes the tag.
func turnOff(t testing.TB, cfg *Config, off unsafeopt.Off) {
	t.Helper()
	if off != (unsafeopt.Off{}) {
		t.Fatalf("this test turns guards off (%+v): run it with -tags redlease_unsafe", off)
	}
}
