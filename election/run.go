package election

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redlease/redlease/fence"
	"github.com/redlease/redlease/internal/backoff"
	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// Run campaigns until ctx ends, and returns why it stopped: an error
// matching ctx's error and its cause ("election: stopped: context
// canceled") when ctx ended; an error matching redlock.ErrClosed when the
// client was closed; an error that redlock.IsFinal reports
// (redlock.ErrAccessDenied, ...) when the nodes refuse the election's key
// for good; an error matching redlock.ErrInvalidArgument when Run was
// called before. Run never returns nil.
//
// While it runs, the elector is a standby or the leader. A standby tries
// to acquire the election's lease when the leader releases it (it listens
// to the lease's change notices on every node), when the leader's key is
// due to lapse after a crash, and every RetryDelay (jittered) otherwise.
// When it wins, a term begins: IsLeader turns true, OnElected starts under
// the term's context, and the lease refreshes itself. The term ends when
// the lease is lost, when [Elector.Resign] is called, when OnElected
// panics, or when ctx ends; then the term's context is cancelled, the
// elector waits for OnElected to return (at most until the term's validity
// runs out), releases the lease, and calls OnDemoted.
//
// When ctx ends during a term, Run hands the term over that way before it
// returns; then it waits for callbacks still running, at most
// Config.StopTimeout, and closes the Events channel.
func (e *Elector) Run(ctx context.Context) error {
	if !e.started.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: election: Run called twice: an Elector campaigns once; make a new one (election.New) to campaign again", redlock.ErrInvalidArgument)
	}
	defer close(e.events)
	e.h.runStarted()
	d := newDispatcher(e.log)
	err := e.campaign(ctx, d)
	e.log.Debug("campaign over", "error", err)
	e.h.runEnded(err)
	d.close()
	e.waitCallbacks(d)
	return err
}

// waitCallbacks waits for the callbacks still running, at most StopTimeout.
func (e *Elector) waitCallbacks(d *dispatcher) {
	elected := make(chan struct{})
	go func() { // returns with the last OnElected, at the latest
		e.wg.Wait()
		close(elected)
	}()
	t := time.NewTimer(e.cfg.StopTimeout)
	defer t.Stop()
	for _, ch := range []<-chan struct{}{d.done, elected} {
		select {
		case <-ch:
		case <-t.C:
			e.log.Warn("callbacks still running after StopTimeout; Run returns without them", "stop_timeout", e.cfg.StopTimeout)
			return
		}
	}
}

// campaign is Run's loop; it returns why it stopped.
func (e *Elector) campaign(ctx context.Context, d *dispatcher) error {
	sub, err := e.client.Internal().Subscribe(ctx, notice.Channel(e.name))
	if err != nil {
		return fmt.Errorf("election: %q: subscribing to change notices: %w", e.name, err)
	}
	defer sub.Close()
	actx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	wg.Go(func() { e.announce(actx, time.Now()) })
	c := &candidate{e: e, d: d, sub: sub, notices: map[string]notice.Kind{}, yielded: map[string]yieldMark{},
		fails: backoff.Exp{Base: e.cfg.Lease.RetryDelay},
		// The leases of the terms outlive Run's ctx: a term is handed
		// over (OnElected returns, then the lease is released), not cut.
		leaseCtx: context.WithoutCancel(ctx)}
	return c.loop(ctx)
}

// stopped is the error of a campaign whose ctx ended.
func stopped(ctx context.Context) error {
	return fmt.Errorf("election: stopped: %w", ctxErr(ctx))
}

// ctxErr is ctx.Err(), joined with its cause when that says more, on one
// line ("context canceled: terminated"; errors.Join would put a newline
// between them); errors.Is finds both.
func ctxErr(ctx context.Context) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause == nil || cause == err {
		return err
	}
	return fmt.Errorf("%w: %w", err, cause)
}

// runTerm holds a term won with l until it ends, then hands it over.
func (c *candidate) runTerm(ctx context.Context, l *lease.Lease) {
	e := c.e
	t := newTerm(l)
	if ctx.Err() != nil {
		// Run stopped during the winning attempt: the term never begins,
		// so no callback hears of it.
		if err := l.Release(context.WithoutCancel(ctx)); err != nil {
			e.log.Warn("release after a stop failed", "token", t.Token, "error", err)
		}
		return
	}
	// The term's context carries its token for the guards (fence.TokenFrom).
	t.ctx, t.cancel = context.WithCancelCause(fence.WithToken(l.Context(), t.Token))
	e.setCurrent(t)
	e.log.Info("elected", "token", t.Token, "validity", time.Until(l.ValidUntil()))
	c.begin(t)

	c.hold(ctx, t)
	c.handover(t, context.Cause(t.ctx))
}

// begin reports a term's start once on each path: to the Hooks, then on
// Events (a reader of Events sees hooks that agree), then to OnElected.
// The callback goroutine starts OnElected, in a goroutine of its own, once
// the callbacks queued before it have returned: the callbacks come in the
// order of the events.
func (c *candidate) begin(t *term) {
	e := c.e
	gap := c.leaderless(t.Start)
	c.own(t)
	c.ownTerm(t)
	e.observe(redlock.Event{Kind: EventElected, Token: t.Token, Duration: gap})
	e.emit(Event{Kind: EventElected, Leader: t.Holder, Term: t.Term})
	f := e.cfg.OnElected
	if f == nil {
		close(t.elected)
		return
	}
	e.wg.Add(1) // now, not in the callback goroutine: Run waits for it
	c.d.push(func() {
		go func() {
			defer e.wg.Done()
			defer close(t.elected)
			if p := guard("OnElected", func() { f(t.ctx, t.Term) }); p != nil {
				e.log.Error("OnElected panicked; ending the term", "token", t.Token, "panic", p.value, "stack", string(p.stack))
				t.cancel(p)
			}
		}()
	})
}

// handover ends a term whose context was cancelled: it waits for OnElected
// (at most until the term's validity ends), releases the lease, and
// reports the demotion.
func (c *candidate) handover(t *term, cause error) {
	e := c.e
	t.endedAt, t.validEnd = time.Now(), t.l.ValidUntil()
	c.gone = t.endedAt
	if !noHandoverWait(e.client) { // off only in a negative control (unsafe.go)
		wait := time.NewTimer(time.Until(t.validEnd))
		select {
		case <-t.elected:
		case <-wait.C:
			e.log.Warn("OnElected did not return before the end of its term's validity; releasing the term without it",
				"token", t.Token, "elapsed", time.Since(t.endedAt))
		}
		wait.Stop()
	}
	window := e.announceHandover(t, cause)
	t.releaseErr = t.l.Release(context.Background())
	e.mu.Lock()
	e.cur = nil
	if !closed(t.elected) {
		e.lingering = t
	}
	e.mu.Unlock()
	close(t.over)
	e.log.Info("demoted", "token", t.Token, "cause", cause, "elapsed", time.Since(t.Start), "release_error", t.releaseErr)

	e.observe(redlock.Event{Kind: EventDemoted, Token: t.Token, Duration: time.Since(t.Start), Err: cause})
	e.emit(Event{Kind: EventDemoted, Leader: t.Holder, Term: t.Term, Err: cause})
	f := e.cfg.OnDemoted
	c.d.push(func() {
		defer close(t.demoted)
		if f != nil {
			c.d.call("OnDemoted", func() { f(t.Term, cause) })
		}
	})
	c.prev = t
	if errors.Is(cause, ErrResigned) || errors.Is(cause, ErrCallbackPanicked) {
		c.notBefore = time.Now().Add(max(e.cfg.ResignDelay, window))
	}
}
