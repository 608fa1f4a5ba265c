package sim

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/redlease/redlease/internal/testing/unsafetest"
)

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	if !unsafetest.Build {
		// Schedules turn guards off (short counter TTLs, controls).
		fmt.Fprintln(os.Stderr, "the simulator's tests need -tags redlease_unsafe (make sim passes it)")
		os.Exit(2)
	}
	// go-redis logs every failed dial; the simulator fails many on purpose.
	redis.SetLogger(quiet{})
	// Schedules allocate much and keep little.
	debug.SetGCPercent(400)
	goleak.VerifyTestMain(m)
	os.Exit(0)
}
