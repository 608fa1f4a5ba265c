package main

import (
	"context"
	"flag"
	"time"

	"github.com/redlease/redlease/internal/permitkey"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// checkPermits checks --permits, and that the flags of elections alone
// are not set with it.
func checkPermits(fs *flag.FlagSet, name string, permits int) error {
	switch {
	case permits < 1 || permits > permitkey.Max:
		return usagef("--permits (%d) must be between 1 and %d", permits, permitkey.Max)
	case permitkey.Problem("--permits", name, permits) != "":
		return usagef("--name: %s", permitkey.Problem("--permits", name, permits))
	case permits > 1 && (isSet(fs, "priority") || isSet(fs, "yield-after")):
		return usagef("--priority and --yield-after order an election's candidates: they do not apply with --permits %d", permits)
	}
	return nil
}

// contend is campaign for a semaphore (--permits above 1): it takes one
// of the permits of r.name (lease.Config.Permits), runs COMMAND while it
// holds it (serve: the same deadline, watchdog and grace as a term), and
// takes one again after the permit ended, until COMMAND exits (without
// --restart) or ctx ends; it returns the exit code.
func (r *runner) contend(ctx context.Context, client *redlock.Client, id string) (int, error) {
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	if r.hooks != nil {
		r.hooks.campaigning(stop)
	}
	cfg := lease.Config{ID: id, TTL: r.plan.ttl, RenewInterval: r.plan.renew, SafetyMargin: r.plan.margin,
		Permits: r.permits, Logger: r.log}
	r.log.Info("waiting for a permit", "key", r.name, "id", id, "permits", r.permits, "ttl", r.plan.ttl,
		"grace", r.plan.grace, "gives_up_before_validity_end", r.plan.margin)
	for {
		l, err := lease.Acquire(runCtx, client, r.name, cfg)
		if err != nil {
			if ctx.Err() != nil {
				return r.lastCode(), nil // interrupted
			}
			if cause := context.Cause(runCtx); cause != nil {
				return 0, cause // --wait-majority ran out
			}
			return 0, err
		}
		if code, exited := r.holdPermit(l, id); exited {
			return code, nil
		}
		if ctx.Err() != nil {
			return r.lastCode(), nil
		}
		if r.restart {
			if !sleepCtx(runCtx, restartDelay) { // another candidate may take the permit
				return r.lastCode(), nil
			}
		}
	}
}

// holdPermit runs COMMAND while l is held, and releases l when COMMAND
// exited on its own (exited true, with its code) or after the permit
// ended and COMMAND was stopped.
func (r *runner) holdPermit(l *lease.Lease, id string) (code int, exited bool) {
	h := l.Holder()
	r.log.Info("permit acquired", "key", h.Key, "permit", h.Permit, "token", h.Token)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.serve(l.Context(), tenure{validUntil: l.ValidUntil, token: h.Token, id: id, permit: h.Permit, resign: l.Release})
	}()
	select {
	case <-done:
		_ = l.Release(context.Background())
		return 0, false
	case code = <-r.exited:
		_ = l.Release(context.Background()) // ends serve's wait
		<-done
		r.log.Info("permit released; exiting with the command's code", "code", code)
		return code, true
	}
}

// sleepCtx waits d, or until ctx ends (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
