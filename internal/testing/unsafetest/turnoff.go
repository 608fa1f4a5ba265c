package unsafetest

import (
	"testing"

	"github.com/redlease/redlease/internal/unsafeopt"
	"github.com/redlease/redlease/redlock"
)

// TurnOff turns the guards of off off in cfg. In a build without the
// switches it fails t when off turns a guard off.
func TurnOff(t testing.TB, cfg *redlock.Config, off unsafeopt.Off) {
	t.Helper()
	if !Build && off != (unsafeopt.Off{}) {
		t.Fatalf("this test turns guards off (%+v): run it with -tags redlease_unsafe", off)
	}
	Set(cfg, off)
}
