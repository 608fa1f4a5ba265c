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
	belief, holding := permitSampler(&cur)
	go func() {
		defer close(sampled)
		c.sample(sctx, belief, holding)
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

// permitSampler is what the sampler looks at under -permits: the permit
// held (Lease.Held says whether the candidate believes it holds it).
func permitSampler(cur *atomic.Pointer[permitHeld]) (belief func() (bool, int64, uint64), holding func() (tenure, bool)) {
	belief = func() (bool, int64, uint64) {
		if h := cur.Load(); h != nil && h.l.Held() {
			return true, h.ts, h.l.Token()
		}
		return false, 0, 0
	}
	holding = func() (tenure, bool) {
		h := cur.Load()
		if h == nil {
			return tenure{}, false
		}
		return tenure{ts: h.ts, token: h.l.Token(), validUntil: h.l.ValidUntil()}, true
	}
	return belief, holding
}
