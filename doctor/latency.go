package doctor

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/lockrule"
)

// latency measures cfg.Pings round trips and checks their p99 against
// NodeTimeout and the TTL's budget: an acquisition's validity is the TTL
// less the round trip and the drift allowance (docs/design.md S3).
func latency(ctx context.Context, cfg *Config, c redis.UniversalClient) Finding {
	rtts := make([]time.Duration, 0, cfg.Pings)
	for range cfg.Pings {
		t0 := time.Now()
		if err := c.Ping(ctx).Err(); err != nil {
			return Finding{ID: CheckLatency, Severity: Warn, Found: "PING failed: " + err.Error(),
				Risk: "round trips not measured", Fix: "check the node answers"}
		}
		rtts = append(rtts, time.Since(t0))
	}
	slices.Sort(rtts)
	p50, p99 := rtts[(len(rtts)-1)*50/100], rtts[(len(rtts)-1)*99/100]
	drift := lockrule.Drift(cfg.TTL, cfg.DriftFactor)
	spent := drift + p99
	f := Finding{ID: CheckLatency, Severity: OK, Found: fmt.Sprintf("PING p50 %s, p99 %s (%d); a %s TTL loses %s to drift and a p99 round trip",
		p50.Round(time.Microsecond), p99.Round(time.Microsecond), len(rtts), cfg.TTL, spent.Round(time.Microsecond))}
	switch {
	case p99 > cfg.NodeTimeout:
		f.Severity = Warn
		f.Risk = fmt.Sprintf("replies later than NodeTimeout (%s) count as no vote: acquisitions and refreshes fail when this node's vote is needed", cfg.NodeTimeout)
		f.Fix = "raise NodeTimeout (--node-timeout) above the p99, or bring the node closer; or --accept latency"
	case spent > cfg.TTL/2:
		f.Severity = Warn
		f.Risk = "over half the TTL is spent before a lock is held: holders keep it on a thin margin and refresh late"
		f.Fix = "raise the TTL (--ttl)"
	}
	return f
}
