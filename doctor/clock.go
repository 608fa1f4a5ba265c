package doctor

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// offsetWarn is the offset of the server's time of day from the client's
// above which the clock check warns.
const offsetWarn = time.Second

// timeSample is one TIME: the server's time and the client's clock at the
// middle of the round trip.
type timeSample struct {
	server time.Time
	client time.Time // cfg.Now at the request + half the round trip; has a monotonic reading
	rtt    time.Duration
}

func sampleTime(ctx context.Context, cfg *Config, c redis.UniversalClient) (timeSample, error) {
	t0 := cfg.Now()
	st, err := c.Time(ctx).Result()
	rtt := cfg.Now().Sub(t0)
	return timeSample{server: st, client: t0.Add(rtt / 2), rtt: rtt}, err
}

// clock compares the server's clock with the client's: its offset (time
// of day) and, over cfg.ClockInterval, its rate against the client's
// monotonic clock (docs/design.md §3.2 item 1: keys expire by the server's
// clock; a lock's validity is counted on the client's).
func clock(ctx context.Context, cfg *Config, c redis.UniversalClient) []Finding {
	a, err := sampleTime(ctx, cfg, c)
	if err != nil {
		return []Finding{clockError(CheckClockOffset, err)}
	}
	out := []Finding{offset(a)}
	t := time.NewTimer(cfg.ClockInterval)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return append(out, clockError(CheckClockRate, context.Cause(ctx)))
	case <-t.C:
	}
	b, err := sampleTime(ctx, cfg, c)
	if err != nil {
		return append(out, clockError(CheckClockRate, err))
	}
	return append(out, rate(cfg, a, b))
}

func clockError(id string, err error) Finding {
	return Finding{ID: id, Severity: Warn, Found: "TIME failed: " + err.Error(),
		Risk: "the server's clock is not checked", Fix: "grant +time; check the node answers"}
}

func offset(a timeSample) Finding {
	d := a.server.Sub(a.client)
	f := Finding{ID: CheckClockOffset, Severity: OK, Found: fmt.Sprintf("server clock %+v from the client's, ± %s", d.Round(time.Microsecond), (a.rtt / 2).Round(time.Microsecond))}
	if d.Abs()-a.rtt/2 > offsetWarn {
		f.Severity = Warn
		f.Risk = "keys expire by relative TTLs, so an offset alone is harmless, but a clock this far off is not synchronised: an NTP step later would expire every key early"
		f.Fix = "synchronise the server's and the client's clocks (NTP, slewing rather than stepping); or --accept clock-offset"
	}
	return f
}

// rate compares the time the server's clock advanced between a and b with
// the client's monotonic clock, within the two round trips' uncertainty.
func rate(cfg *Config, a, b timeSample) Finding {
	server, client := b.server.Sub(a.server), b.client.Sub(a.client)
	unsure := a.rtt/2 + b.rtt/2 + 2*time.Microsecond // TIME has microseconds
	allowed := time.Duration(float64(client) * cfg.DriftFactor)
	d := server - client
	f := Finding{ID: CheckClockRate, Severity: OK,
		Found: fmt.Sprintf("server clock advanced %s in %s of the client's monotonic clock (%+.3f%%, ± %s; allowance %.2f%%)",
			server.Round(time.Microsecond), client.Round(time.Microsecond), 100*float64(d)/float64(client), unsure.Round(time.Microsecond), 100*cfg.DriftFactor)}
	if d.Abs()-unsure > allowed {
		f.Severity = Fail
		f.Risk = "a server clock that runs fast or jumps expires lock keys before their holders' validity ends: two holders; a slow one keeps them past it"
		f.Fix = "fix the server's clock (NTP, no steps, a sound clocksource); raise DriftFactor only for a known, steady rate"
	}
	return f
}
