package sim

import (
	"context"
	"os"
	"runtime/debug"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	// go-redis logs every failed dial; the simulator fails many on purpose.
	redis.SetLogger(quiet{})
	// Schedules allocate much and keep little.
	debug.SetGCPercent(400)
	goleak.VerifyTestMain(m)
	os.Exit(0)
}
