package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"time"

	"github.com/redlease/redlease/internal/testing/checker/wire"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// permitHeld is the semaphore permit the candidate holds (-permits).
type permitHeld struct {
	l  *lease.Lease
	ts int64
}

// holdPermits is the candidate under -permits K: instead of an election,
// it takes one of the K permits of the semaphore -key (lease.Acquire with
// Config.Permits), holds it for -resign-after (jittered; until it is
// lost), releases it, and again, until ctx ends. It reports each tenure
// with the events of a term (Elected with the permit, Refresh, Belief,
// Stepdown, Demoted), so that the test judges them per permit (C1, C2)
// and all together (at most K at once). It does no work on the store:
// tokens order the holders of one permit, not of the semaphore.
func (c *candidate) holdPermits(ctx context.Context, client *redlock.Client, cfg lease.Config) error {
	var cur atomic.Pointer[permitHeld]
	sctx, stopSampler := context.WithCancel(context.Background())
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		c.samplePermit(sctx, &cur)
	}()
	c.emit(wire.Event{Ev: wire.Ready, PID: os.Getpid()})
	var err error
	for ctx.Err() == nil {
		var l *lease.Lease
		if l, err = lease.Acquire(ctx, client, c.o.key, cfg); err != nil {
			if ctx.Err() == nil {
				time.Sleep(c.o.retryDelay)
			}
			continue
		}
		h := &permitHeld{l: l, ts: c.clock.Of(time.Now())}
		c.emit(wire.Event{Ev: wire.Elected, TS: h.ts, Token: l.Token(), Permit: l.Holder().Permit,
			VU: c.clock.Of(l.ValidUntil()), DL: c.clock.Of(l.ValidUntil().Add(-c.o.margin()))})
		cur.Store(h)
		cause := c.holdPermit(ctx, l)
		cur.Store(nil)
		c.emit(wire.Event{Ev: wire.Stepdown, TS: h.ts, Token: l.Token()})
		rctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = l.Release(rctx)
		cancel()
		c.emit(wire.Event{Ev: wire.Demoted, TS: h.ts, Token: l.Token(), VU: c.clock.Of(l.ValidUntil()), Cause: cause})
		if ctx.Err() == nil {
			time.Sleep(c.o.retryDelay/2 + rand.N(c.o.retryDelay+1))
		}
	}
	stopSampler()
	<-sampled
	c.emit(wire.Event{Ev: wire.Exit, Cause: fmt.Sprint(ctx.Err())})
	return nil
}

// holdPermit holds l until it is lost, -resign-after (jittered x0.5-1.5;
// 0: never) has passed, or ctx ends, and says which.
func (c *candidate) holdPermit(ctx context.Context, l *lease.Lease) string {
	var release <-chan time.Time
	if d := c.o.resignAfter; d > 0 {
		timer := time.NewTimer(d/2 + rand.N(d+1))
		defer timer.Stop()
		release = timer.C
	}
	select {
	case <-l.Context().Done():
		return fmt.Sprint(context.Cause(l.Context()))
	case <-release:
		return "released"
	case <-ctx.Done():
		return "stopped"
	}
}

// samplePermit looks at the permit held every millisecond (every 10ms
// while none is) and reports each run of samples that said it holds
// (Lease.Held) when it ends, and each move of its validity.
func (c *candidate) samplePermit(ctx context.Context, cur *atomic.Pointer[permitHeld]) {
	var (
		active bool
		run    wire.Event
		lastVU int64
	)
	flush := func() {
		if active {
			c.emit(run)
			active = false
		}
	}
	defer flush()
	for ctx.Err() == nil {
		tb := wire.Now()
		h := cur.Load()
		ok := h != nil && h.l.Held()
		if active && (!ok || h.ts != run.TS) {
			flush()
		}
		period := 10 * time.Millisecond
		if ok {
			if !active {
				run, active = wire.Event{Ev: wire.Belief, TS: h.ts, Token: h.l.Token(), First: tb}, true
			}
			run.Last, run.N = tb, run.N+1
			if vu := c.clock.Of(h.l.ValidUntil()); vu != lastVU {
				lastVU = vu
				c.emit(wire.Event{Ev: wire.Refresh, TS: h.ts, Token: h.l.Token(), VU: vu, DL: c.clock.Of(h.l.ValidUntil().Add(-c.o.margin()))})
			}
			period = time.Millisecond
		}
		time.Sleep(period)
	}
}
