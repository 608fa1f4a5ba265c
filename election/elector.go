package election

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"

	"github.com/redlease/redlease/internal/named"
	"github.com/redlease/redlease/observer"
	"github.com/redlease/redlease/redlock"
)

// Elector is one candidate of the election called name: [Elector.Run]
// campaigns, and while it leads, runs Config.OnElected under the term's
// context.
//
// An Elector campaigns once: Run may be called once, and returns when its
// context ends (or the client is closed); to campaign again, make a new
// Elector (on the same client, with the same ID if you like). Its other
// methods may be called at any time, before, during and after Run, from any
// goroutine: an Elector is safe for concurrent use.
type Elector struct {
	client *redlock.Client
	name   string
	cfg    Config // validated, defaults filled in (those of cfg.Lease too)
	obs    *observer.Observer
	log    hclog.Logger
	hooks  func(redlock.Event) // the client's; nil: none

	h       health        // what the health checks read
	reg     registry      // the candidates heard (registry.go)
	roll    chan struct{} // a roll call heard: publish the record now (capacity 1)
	events  chan Event
	dropped atomic.Uint64
	started atomic.Bool
	wg      sync.WaitGroup // OnElected goroutines

	mu        sync.Mutex
	cur       *term // the term being held or handed over; nil between terms
	lingering *term // a past term whose OnElected had not returned when it was released
}

// New returns an Elector for the election called name on client's nodes.
// The name is the key of the election's lease, used as given: every
// candidate and observer of one election uses the same name and nodes, and
// client.Inspect(ctx, name) reads it too. New validates cfg (also
// against the client's settings) and does not contact the nodes.
func New(client *redlock.Client, name string, cfg Config) (*Elector, error) {
	if err := named.Check(client, name); err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	// The lease's defaults, and its check against the client, as
	// lease.Acquire makes them on every attempt: so that New fails, rather
	// than every campaign attempt.
	lc, err := cfg.Lease.Resolve(client)
	if err != nil {
		return nil, err
	}
	lc.Metadata = maps.Clone(lc.Metadata)
	cfg.Lease = lc
	cfg = cfg.withDefaults()
	log := lc.Logger.With("key", name, "id", lc.ID)
	obs, err := observer.New(client, name, observer.Config{PollInterval: lc.RetryDelay, Logger: log})
	if err != nil {
		return nil, err
	}
	return &Elector{client: client, name: name, cfg: cfg, obs: obs, log: log, hooks: client.Config().Hooks,
		events: make(chan Event, cfg.EventBuffer), roll: make(chan struct{}, 1)}, nil
}

// Events returns the channel of the elector's events: the same events as
// the callbacks, in the same order, each once ([EventLeaderChanged] with
// OnLeaderChange, [EventElected] with OnElected, [EventDemoted] with
// OnDemoted), sent just before the callback is queued. A term of this
// elector is EventElected, not also EventLeaderChanged. The elector never
// waits for a reader: events that do not fit in its buffer
// (Config.EventBuffer) are dropped, each with a warning in the log. The
// channel is closed when Run returns (never, if Run is not called).
// docs/notifications.md compares it with the callbacks, an observer's
// Watch and the Hooks.
func (e *Elector) Events() <-chan Event { return e.events }

// IsLeader reports whether this elector leads now: a term began, its
// context has not been cancelled, and its deadline has not passed by the
// local monotonic clock, checked on every call.
func (e *Elector) IsLeader() bool {
	t := e.current()
	return t != nil && t.ctx.Err() == nil && t.l.Held()
}

// Term returns the current term and true while [Elector.IsLeader] is true.
func (e *Elector) Term() (Term, bool) {
	t := e.current()
	if t == nil || t.ctx.Err() != nil || !t.l.Held() {
		return Term{}, false
	}
	return t.Term, true
}

// Resign ends the current term, if this elector leads, and hands the
// leadership over: it cancels the term's context, waits for OnElected to
// return (at most until the term's validity runs out), releases the lease
// on every node (which wakes the standbys at once), then returns. The
// elector goes on campaigning, but stands aside for Config.ResignDelay so
// that another candidate takes over. Resign returns nil when there was no
// term to end, the release's error when some nodes could not be reached
// (their copies of the key expire with the TTL), or ctx's error when ctx
// ended first (the handover goes on) or had ended before the call (even
// with no term to end). Resign is safe to call from any
// goroutine. From inside OnElected, pass the term's own context: Resign
// cancels it and so returns at once, and the handover completes when
// OnElected returns (waiting for the handover there would wait for itself).
//
// Resign(ctx, id) hands the term over to the candidate id: the other
// candidates stand aside for Config.HandoverWindow so that id, which
// tries at once, is elected; if it does not take over, the others race
// after the window. id must be a candidate this elector heard campaign
// (its registry record; docs/design.md §6.4), other than itself: an empty
// or unknown id, or more than one, is an error wrapping
// redlock.ErrInvalidArgument, and a call while this elector does not lead
// is one wrapping redlock.ErrNotHeld; the term goes on after either.
func (e *Elector) Resign(ctx context.Context, to ...string) error {
	id, err := e.successorOf(to)
	if err != nil {
		return err
	}
	t := e.current()
	if t == nil {
		if ctx.Err() != nil {
			return ctxErr(ctx)
		}
		if id != "" {
			return fmt.Errorf("%w: election %q: Resign to %q: this elector does not lead", redlock.ErrNotHeld, e.name, id)
		}
		return nil
	}
	if err := e.handTo(t, id); err != nil {
		return err
	}
	t.cancel(ErrResigned)
	if ctx.Err() != nil {
		return ctxErr(ctx) // the handover goes on
	}
	select {
	case <-t.over:
		return t.releaseErr
	case <-ctx.Done():
		return ctxErr(ctx)
	}
}

// observe reports ev to the client's Hooks, if any.
func (e *Elector) observe(ev redlock.Event) {
	if e.hooks != nil {
		ev.Key, ev.Outcome = e.name, e.client.Internal().Outcome(ev.Err)
		e.hooks(ev)
	}
}

func (e *Elector) current() *term {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cur
}

func (e *Elector) setCurrent(t *term) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cur = t
}
