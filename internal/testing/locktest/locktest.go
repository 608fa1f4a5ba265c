// Package locktest makes the redlock Clients of tests: those of redlock's
// external tests and of the packages built on redlock (lease, observer,
// election). redlock's own internal tests cannot import it (it imports
// redlock); internal/redistest and internal/testnodes, which they use, do
// not.
package locktest

import (
	"context"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/redlock"
)

// New makes a Client over nodes, closed on cleanup, logging to t.Log at
// Debug unless cfg has a Logger; bootstrap declares the nodes brand new, so
// that they vote at once instead of after MaxTTL. It fails the test if
// either step fails.
func New(t testing.TB, cfg redlock.Config, nodes []redis.UniversalClient, bootstrap bool) *redlock.Client {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testnodes.Logger(t, hclog.Debug)
	}
	c, err := redlock.New(context.Background(), cfg, nodes...)
	if err != nil {
		t.Fatalf("locktest: redlock.New: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if bootstrap {
		if err := c.Bootstrap(context.Background()); err != nil {
			t.Fatalf("locktest: Bootstrap: %v", err)
		}
	}
	return c
}
