package redlock

import (
	"context"
	"time"

	"github.com/redlease/redlease/internal/redlockx/link"
	"github.com/redlease/redlease/internal/unsafeopt"
)

// What only the packages built on redlock use (lease, observer, election,
// the CLI) is registered here for internal/redlockx, which types it, so
// that none of it is an exported name of this package.
func init() {
	link.Register(link.Funcs{
		Config:         func(c any) any { return c.(*Client).cfg },
		Defaults:       func() any { return Config{}.withDefaults() },
		MaxExtendBatch: maxExtendBatch,
		Quorum:         func(c any) int { return c.(*Client).quorum },
		Drift: func(c any, ttl time.Duration) time.Duration {
			cfg := configOf(c)
			return cfg.drift(ttl)
		},
		CheckTTL: func(c any, ttl time.Duration) error {
			cfg := configOf(c)
			return cfg.checkTTL(ttl)
		},
		Publish: func(ctx context.Context, c any, channel, message string) (int, error) {
			return c.(*Client).publish(ctx, channel, message)
		},
		Subscribe: func(ctx context.Context, c any, channel string) (link.Subscription, error) {
			s, err := c.(*Client).subscribe(ctx, channel)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		ReleaseNotice: func(channel, message string) any { return releaseNotice(channel, message) },
		Extend: func(ctx context.Context, l any, ttl, wait time.Duration) error {
			return l.(*Lock).extendWithin(ctx, ttl, wait)
		},
		ExtendAll: func(ctx context.Context, c, locks any, wait time.Duration) []error {
			return c.(*Client).extendAll(ctx, locks.([]*Lock), wait)
		},
		QuietQuarantine: func(cfg any) { cfg.(*Config).quietQuarantine = true },
		UnsafeOff:       func(c any) unsafeopt.Off { return c.(*Client).cfg.unsafeOff },
		AcquiredAt:      func(l any) time.Time { return l.(*Lock).acquiredAt },
		Outcome:         outcome,
	})
}

// configOf is the configuration of c, a *Client, or c itself, a Config
// (with defaults filled in).
func configOf(c any) Config {
	if cl, ok := c.(*Client); ok {
		return cl.cfg
	}
	return c.(Config).withDefaults()
}
