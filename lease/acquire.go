package lease

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/redlease/redlease/internal/backoff"
	"github.com/redlease/redlease/internal/keycheck"
	"github.com/redlease/redlease/internal/lockrule"
	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/internal/permitkey"
	"github.com/redlease/redlease/internal/redlockx"
	"github.com/redlease/redlease/redlock"
)

// Change notices (internal/notice). A lease PUBLISHes on its key's notice
// channel, on every node, when it is acquired (from a goroutine of the
// lease, right after acquisition: the new holder's value) and when its
// keys are deleted (by redlock's release script, on each node where it
// deleted them). Notices are hints: they can be lost, late, duplicated or
// forged by anyone who can PUBLISH, so a receiver confirms with a majority
// read (redlock.Client.Inspect) or an attempt of its own. An expired lease sends none.

// Acquire waits until it holds the lease on key (one of the permits of
// the semaphore called key, when Config.Permits is above 1), or ctx ends.
//
// It makes an attempt at once (at every permit, from a random one on);
// while the key (every permit) is held elsewhere it listens to the key's
// change notices and tries again as soon as a release notice arrives (the
// released permit first), or after a delay that backs off exponentially with jitter from
// Config.RetryDelay (capped at 8 x RetryDelay) otherwise. When ctx
// ends first, the error joins the last attempt's error (matching
// redlock.ErrNotAcquired, with every node's answer) and ctx.Err() (and its
// cause, when there is one). Errors that a retry cannot cure end the wait
// at once: an invalid Config (redlock.ErrInvalidArgument), an empty key or nil client
// (redlock.ErrInvalidArgument), a closed client (redlock.ErrClosed).
//
// The lease is bound to ctx: when ctx is cancelled after acquisition, the
// lease ends (the cause of [Lease.Context] is context.Cause(ctx)) and its keys are released.
// To bound only the wait, give Acquire a context that is cancelled only
// when the wait runs too long: e.g. ctx, cancel := context.WithCancel(parent);
// t := time.AfterFunc(maxWait, cancel); l, err := Acquire(ctx, ...); and if
// t.Stop() reports the timer stopped, the lease lives until cancel is called.
//
// Acquire is safe for concurrent use; each call gets its own lease. The
// caller must end every lease it gets: Release it, or cancel ctx.
func Acquire(ctx context.Context, client *redlock.Client, key string, cfg Config) (*Lease, error) {
	a, err := prepare(client, key, cfg)
	if err != nil {
		return nil, err
	}
	l, err := a.try(ctx, -1)
	if err == nil {
		return l, nil
	}
	if stop := a.stop(ctx, err); stop != nil {
		return nil, stop
	}
	sub, serr := client.Internal().Subscribe(ctx, a.channel)
	if serr != nil {
		return nil, errors.Join(err, serr)
	}
	defer sub.Close()
	// The first pass tries again at once (every permit): a release between
	// the first attempt and the subscription sent its notice to nobody.
	for permit := -1; ; {
		if l, err = a.try(ctx, permit); err == nil {
			return l, nil
		}
		if stop := a.stop(ctx, err); stop != nil {
			return nil, stop
		}
		var werr error
		if permit, werr = a.wait(ctx, sub); werr != nil {
			return nil, errors.Join(err, werr)
		}
	}
}

// TryAcquire makes one attempt to acquire the lease on key (one attempt at
// each permit, from a random one on, when Config.Permits is above 1); see
// [Acquire], whose rules it follows (the lease is bound to ctx). It fails
// with an error matching redlock.ErrNotAcquired when the key (every permit)
// is held elsewhere or a majority of nodes could not be reached. It is safe
// for concurrent use.
func TryAcquire(ctx context.Context, client *redlock.Client, key string, cfg Config) (*Lease, error) {
	a, err := prepare(client, key, cfg)
	if err != nil {
		return nil, err
	}
	l, err := a.try(ctx, -1)
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		err = errors.Join(err, ctxErr(ctx))
	}
	return l, err
}

// acquirer holds what the attempts of one Acquire share.
type acquirer struct {
	client  *redlock.Client
	key     string
	cfg     Config                  // validated, defaults filled in
	fields  string                  // encoded ID and Metadata
	channel string                  // key's notice channel (every permit's)
	opts    []redlock.AcquireOption // the value, the refreshes' wait (permitOpts adds the release notice)
	retry   backoff.Exp             // Acquire's waits between attempts
	k       int                     // permits to take from (permits.go); 1 for a plain lease
}

func prepare(client *redlock.Client, key string, cfg Config) (*acquirer, error) {
	switch {
	case client == nil:
		return nil, fmt.Errorf("%w: nil *redlock.Client", redlock.ErrInvalidArgument)
	case keycheck.Problem("key", key) != "":
		return nil, fmt.Errorf("%w: %s", redlock.ErrInvalidArgument, keycheck.Problem("key", key))
	}
	if err := cfg.validateFor(client); err != nil {
		return nil, err
	}
	if p := permitkey.Problem("Permits", key, cfg.Permits); p != "" {
		return nil, fmt.Errorf("%w: %s", errInvalidConfig, p)
	}
	cfg = cfg.withClient(client)
	cfg.Metadata = maps.Clone(cfg.Metadata)
	a := &acquirer{client: client, key: key, cfg: cfg,
		fields: notice.EncodeHolder(cfg.ID, cfg.Metadata), channel: notice.Channel(key),
		retry: backoff.Exp{Base: cfg.RetryDelay}, k: permits(client, cfg)}
	a.opts = []redlock.AcquireOption{
		redlockx.Value(func(nonce string) string { return notice.EncodeValue(nonce, a.fields) }),
		// Refreshes wait up to RetryInterval for a majority (scheduler.go).
		redlockx.ExtendWait(cfg.RetryInterval),
	}
	return a, nil
}

// acquiredAt is when the acquisition that produced lock started, with its
// monotonic reading: redlock sets a new lock's ValidUntil to that start +
// TTL - drift (docs/design.md S3; internal/lockrule), so it is read back
// from there. The first refresh is scheduled from it.
func (a *acquirer) acquiredAt(lock *redlock.Lock) time.Time {
	return lock.ValidUntil().Add(-(a.cfg.TTL - lockrule.Drift(a.cfg.TTL, a.client.Config().DriftFactor)))
}

// try is one attempt: at permit, or, when permit is -1, at every permit
// (scan; a plain lease has one, permit 0).
func (a *acquirer) try(ctx context.Context, permit int) (*Lease, error) {
	switch {
	case a.k == 1:
		return a.tryPermit(ctx, 0)
	case permit < 0:
		return a.scan(ctx)
	}
	return a.tryPermit(ctx, permit)
}

// tryPermit is one attempt at permit i (the key itself for a plain lease).
// A lock whose validity does not outlast the safety margin (a very slow
// acquisition) is released and counts as not acquired.
func (a *acquirer) tryPermit(ctx context.Context, i int) (*Lease, error) {
	key := permitkey.Key(a.key, i)
	lock, err := a.client.TryAcquire(ctx, key, a.cfg.TTL, a.permitOpts(i)...)
	if err != nil {
		return nil, err
	}
	if left := time.Until(lock.ValidUntil()); left <= a.cfg.SafetyMargin {
		_ = lock.Release(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("%w: %q: validity left after acquiring (%s) is not above SafetyMargin (%s)",
			redlock.ErrNotAcquired, key, left, a.cfg.SafetyMargin)
	}
	return newLease(ctx, a, lock, i), nil
}

// stop returns the error Acquire ends with after a failed attempt, or nil
// to go on waiting.
func (a *acquirer) stop(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		if errors.Is(err, ctx.Err()) {
			return err
		}
		return errors.Join(err, ctxErr(ctx))
	case redlock.IsFinal(err):
		return err
	}
	return nil
}

// wait sleeps the next delay of the backoff (from RetryDelay), or until a
// release notice of one of our permits (or a notice of a kind it does not
// know) arrives, or until ctx ends (then it returns the context's error).
// It returns the permit to try (-1: every permit, as after the delay).
// Acquire notices and an election's steering notices (internal/notice)
// say nothing of a release.
func (a *acquirer) wait(ctx context.Context, sub redlockx.Subscription) (int, error) {
	t := time.NewTimer(a.retry.Next())
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return -1, nil
		case n := <-sub.C():
			if i, ok := a.released(n.Payload); ok {
				return a.drained(sub, i), nil
			}
		case <-ctx.Done():
			return -1, ctxErr(ctx)
		}
	}
}

// ctxErr is ctx.Err(), joined with its cause when that says more.
func ctxErr(ctx context.Context) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause == nil || cause == err {
		return err
	}
	return errors.Join(err, cause)
}

// newLease starts the lease on a freshly acquired lock: its context, its
// acquire notice, its deadline timer and its place in the client's
// refresh scheduler.
func newLease(ctx context.Context, a *acquirer, lock *redlock.Lock, permit int) *Lease {
	lctx, cancel := context.WithCancelCause(ctx)
	l := &Lease{
		client:     a.client,
		lock:       lock,
		key:        permitkey.Key(a.key, permit), // the key itself for a plain lease
		log:        a.cfg.Logger,
		renew:      a.cfg.RenewInterval,
		retry:      a.cfg.RetryInterval,
		margin:     a.cfg.SafetyMargin,
		permit:     uint16(permit), // below permitkey.Max+1
		ctx:        lctx,
		cancel:     cancel,
		validUntil: lock.ValidUntil(),
	}
	acquiredAt := a.acquiredAt(lock)
	l.log.Debug("lease acquired", "key", l.key, "token", lock.Token(), "holder", a.cfg.ID,
		"validity", time.Until(l.validUntil), "elapsed", time.Since(acquiredAt))
	msg := notice.Message{Kind: notice.Acquired, Value: lock.Value()}.Encode()
	l.exited.Go(func() {
		if _, err := a.client.Internal().Publish(context.WithoutCancel(ctx), a.channel, msg); err != nil {
			l.log.Debug("acquire notice not sent", "key", l.key, "error", err)
		}
	})
	l.mu.Lock()
	l.timer = time.AfterFunc(time.Until(l.deadlineLocked()), l.expire)
	l.mu.Unlock()
	l.exited.Add(1)
	schedule(l, acquiredAt.Add(a.cfg.RenewInterval))
	if ctx.Done() != nil {
		// The parent's cancellation ends the lease too. (On the parent, not
		// on lctx: lctx then keeps no map of children, which would cost
		// every lease a few hundred bytes.)
		stop := context.AfterFunc(ctx, func() { l.end(context.Cause(ctx)) })
		l.mu.Lock()
		l.stopParent = stop
		l.mu.Unlock()
	}
	return l
}
