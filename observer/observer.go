package observer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/redlease/redlease/internal/named"
	"github.com/redlease/redlease/internal/permitkey"
	"github.com/redlease/redlease/internal/splitbrain"
	"github.com/redlease/redlease/internal/unfenced"
	"github.com/redlease/redlease/redlock"
)

// Observer reads who leads the election called name, on the nodes of a
// redlock.Client. It holds no goroutine of its own ([Observer.Watch] starts
// one per watch) and needs no Close; it lives as long as its client.
//
// An Observer is safe for concurrent use by multiple goroutines.
type Observer struct {
	client *redlock.Client
	name   string
	cfg    Config
	log    hclog.Logger
	hooks  func(redlock.Event) // the client's; nil: none

	// witness judges the terms this observer's Watch knows completed
	// (their acquire notices came) for evidence of two holders.
	witness splitbrain.Witness

	mu        sync.Mutex
	seenValue string // the last leader a read returned...
	seenToken uint64 // ...and the highest token seen with it
}

// New returns an Observer of the election called name (the lease key the
// candidates campaign on; see election.New). It checks its arguments and
// the Config; it does not contact the nodes.
func New(client *redlock.Client, name string, cfg Config) (*Observer, error) {
	if err := named.Check(client, name); err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if p := permitkey.Problem("Permits", name, cfg.Permits); p != "" {
		return nil, fmt.Errorf("%w: %s", errInvalidConfig, p)
	}
	if cfg.Logger == nil {
		cfg.Logger = client.Config().Logger
	}
	cfg = cfg.withDefaults()
	return &Observer{client: client, name: name, cfg: cfg, log: cfg.Logger, hooks: client.Config().Hooks}, nil
}

// describe returns the ID and the token, or "none" for no leader.
func describe(l redlock.Holder) string {
	if l.Value == "" {
		return "none"
	}
	return fmt.Sprintf("%s (token %d)", l, l.Token)
}

// Leader returns the current leader from a majority read of the election's
// key (redlock.Client.Inspect); an observer of a semaphore (Config.Permits
// above 1) has none, and Leader fails with an error matching
// redlock.ErrInvalidArgument (a [Watch] reports its holders). It fails with an error matching
// redlock.ErrNoHolder when a majority of nodes answered and nobody holds
// the key on a majority, with [ErrUnknown] when fewer than a majority
// could answer, and with the context's error or redlock.ErrClosed
// otherwise. Every node is asked at once; the read takes at most the
// client's NodeTimeout, a little longer when a new leader's token is being
// written back: a new leader shown with a token that is not above the last
// one this Observer saw is read again for up to ~130ms, and reported with
// Token 0 (not known yet) if its token still has not shown, never with
// another term's (see redlock.Holder.Token).
func (o *Observer) Leader(ctx context.Context) (redlock.Holder, error) {
	if o.cfg.Permits > 1 {
		return redlock.Holder{}, fmt.Errorf("%w: %q is a semaphore of %d permits (Config.Permits): it has holders, not a leader (Event.Holders of a Watch)",
			errInvalidConfig, o.name, o.cfg.Permits)
	}
	l, shown, err := unfenced.Read(ctx, func() (redlock.Holder, error) { return o.checkedRead(ctx) }, o.unfenced)
	if errors.Is(err, unfenced.ErrCut) {
		return redlock.Holder{}, ctxErr(ctx)
	}
	if shown { // not a new term with another term's token, zeroed
		o.remember(l)
	}
	return l, err
}

// unfenced reports a new leader whose token is not above the last leader's:
// read before its token was written back.
func (o *Observer) unfenced(l redlock.Holder) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return l.Token != 0 && o.seenValue != "" && l.Value != o.seenValue && l.Token <= o.seenToken
}

func (o *Observer) remember(l redlock.Holder) {
	if l.Value == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seenValue = l.Value
	o.seenToken = max(o.seenToken, l.Token)
}

// checkedRead is one majority read, checked for evidence of two holders
// (docs/design.md §6.3) before anything else is made of it.
func (o *Observer) checkedRead(ctx context.Context) (redlock.Holder, error) {
	start := time.Now()
	l, exact, err := o.readOnce(ctx)
	if err == nil {
		if ev := o.witness.Read(l.Value, l.Token, start, time.Now(), exact); ev != nil {
			o.alarm(l, ev)
		}
	}
	return l, err
}

// alarm reports evidence that two holders held at once: l is the later
// term. Logged at Error and reported to the client's Hooks.
func (o *Observer) alarm(l redlock.Holder, ev error) {
	o.log.Error("split brain: two holders at once", "key", o.name, "evidence", splitbrain.Token,
		"holder", l.String(), "token", l.Token, "error", ev)
	if o.hooks != nil {
		o.hooks(redlock.Event{Kind: redlock.EventSplitBrain, Key: o.name, Token: l.Token, Evidence: splitbrain.Token,
			Err: ev, Outcome: o.client.Internal().Outcome(ev)})
	}
}

// readOnce is one majority read. exact reports that every node answered
// and votes: the token read is then exactly the holder's once its
// acquisition completed, never the counter of a copy granted late above
// it (docs/design.md §4.4, §6.3).
func (o *Observer) readOnce(ctx context.Context) (l redlock.Holder, exact bool, err error) {
	in, err := o.client.Inspect(ctx, o.name)
	switch {
	case ctx.Err() != nil:
		return redlock.Holder{}, false, ctxErr(ctx)
	case in == nil:
		return redlock.Holder{}, false, err // a closed client, a bad argument: not the nodes' answer
	case err == nil:
		return in.Holder, !slices.ContainsFunc(in.Nodes, func(n redlock.NodeResult) bool { return n.Err != nil || n.Quarantined }), nil
	}
	return redlock.Holder{}, false, o.noHolder(in.Nodes)
}

// noHolder is why a majority read found no holder: nobody holds the key
// (an error matching redlock.ErrNoHolder), or the nodes that answered
// cannot tell ([ErrUnknown]).
func (o *Observer) noHolder(nodes []redlock.NodeResult) error {
	quorum := o.client.Internal().Quorum()
	var ready int
	var why []string
	held := map[string]int{} // values seen on nodes that answered
	for _, n := range nodes {
		switch {
		case n.Err != nil:
			why = append(why, fmt.Sprintf("%s: %v", n.Node, n.Err))
		case n.Quarantined:
			why = append(why, fmt.Sprintf("%s: quarantined for %s", n.Node, n.Quarantine.Round(time.Millisecond)))
		default:
			ready++
			if n.Value != "" {
				held[n.Value]++
			}
		}
	}
	// "No leader" only when no value could be on a majority even counting
	// every node that did not answer; otherwise the answer is unknown.
	silent := len(nodes) - ready
	for _, c := range held {
		if c+silent >= quorum && ready >= quorum {
			return fmt.Errorf("%w: %q: a value is on %d nodes and %d did not answer: it may be on a majority: %s",
				ErrUnknown, o.name, c, silent, strings.Join(why, "; "))
		}
	}
	if ready < quorum {
		return fmt.Errorf("%w: %q: %d of %d nodes could answer, %d needed: %s",
			ErrUnknown, o.name, ready, len(nodes), quorum, strings.Join(why, "; "))
	}
	return fmt.Errorf("observer: %w: %q: no value held on %d of %d nodes", redlock.ErrNoHolder, o.name, quorum, len(nodes))
}

// ctxErr is ctx.Err(), joined with its cause when that says more.
func ctxErr(ctx context.Context) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause == nil || cause == err {
		return err
	}
	return errors.Join(err, cause)
}
