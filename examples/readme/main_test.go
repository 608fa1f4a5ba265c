package readme_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/redlock"
)

// addrs are the addresses of the real servers the examples run on: three
// redis-servers (REDLEASE_REDIS_SERVER), bootstrapped before the examples
// run, as a brand-new deployment would be once.
var addrs []string

func TestMain(m *testing.M) {
	g, stop, err := redistest.StartMain(3)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	addrs = g.Addrs()
	code := bootstrap()
	if code == 0 {
		code = m.Run()
	}
	stop()
	if code == 0 {
		if err := goleak.Find(testnodes.IgnoreRedial); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// bootstrap declares the fresh servers brand new (Client.Bootstrap), so
// that the examples need not wait MaxTTL for their quarantine to end.
func bootstrap() int {
	ctx := context.Background()
	c, err := redlock.Dial(ctx, redlock.Config{}, addrs, redlock.DialOptions{})
	if err == nil {
		err = c.Bootstrap(ctx)
		_ = c.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bootstrap:", err)
		return 1
	}
	return 0
}
