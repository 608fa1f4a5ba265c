package observer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/redlease/redlease/internal/named"
	"github.com/redlease/redlease/lease"
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
	hooks  redlock.Hooks // the client's; nil: none

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
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = client.Config().Logger
	}
	cfg = cfg.withDefaults()
	return &Observer{client: client, name: name, cfg: cfg, log: cfg.Logger, hooks: client.Config().Hooks}, nil
}

// Leader is a leader as a majority read saw it. The zero Leader (its Value
// empty) means no leader. A Leader is a plain value; its Metadata map is
// its own.
type Leader struct {
	// ID is the leader's ID (lease.Config.ID, election.Config.Lease.ID); for a
	// value not written by package lease, "foreign:" and the raw value.
	ID string
	// Metadata is what the leader published with its ID; nil when none.
	Metadata map[string]string
	// Token is the fencing token of the leader's term: exactly the token
	// the leader holds, whichever nodes are silent, once its acquisition
	// completed (see redlock.Inspection.Token). A read made within the
	// round trip in which the new leader's token is written may show the
	// previous token; [Observer.Leader] reads again briefly when a new
	// leader shows a token that is not above the last one it saw, and a
	// [Watch] reports the term again once its own token shows (a term's
	// token never goes back in a Watch).
	Token uint64
	// Remaining is the validity the leader had left when it was read, as
	// far as the nodes tell (lowest PTTL of the majority minus the read's
	// duration and the drift allowance): an estimate for display.
	Remaining time.Duration
	// Expires estimates, on this process's clock, when a majority of nodes
	// will have dropped the key if the leader does not refresh it: the
	// earliest a standby can take over after a crash. Zero when unknown.
	Expires time.Time
	// Value is the raw value stored in the key (see lease.Holder): it is
	// unique per term, so two Leaders with the same Value are the same term
	// of the same leader. It is empty for no leader.
	Value string
}

// none reports whether l is the zero Leader: no leader.
func (l Leader) none() bool { return l.Value == "" }

// describe returns the ID and the token, or "none" for no leader.
func (l Leader) describe() string {
	if l.none() {
		return "none"
	}
	return fmt.Sprintf("%s (token %d)", l.ID, l.Token)
}

// Leader returns the current leader from a majority read of the election's
// key. It fails with an error matching [ErrNoLeader] when a majority of
// nodes answered and nobody holds the key on a majority, with [ErrUnknown]
// when fewer than a majority could answer, and with the context's error or
// redlock.ErrClosed otherwise. Every node is asked at once; the read takes
// at most the client's NodeTimeout (a little longer when a new leader's
// token is being written: see [Leader.Token]).
func (o *Observer) Leader(ctx context.Context) (Leader, error) {
	for attempt := 0; ; attempt++ {
		l, err := o.readOnce(ctx)
		if err != nil || !o.unfenced(l) || attempt == unfencedRereads {
			o.remember(l)
			return l, err
		}
		// A new value with an old token: its fencing round trip is in
		// flight. Read again in a moment.
		t := time.NewTimer(unfencedWait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return Leader{}, ctxErr(ctx)
		}
	}
}

const (
	unfencedRereads = 3
	unfencedWait    = time.Millisecond
)

// unfenced reports a new leader whose token is not above the last leader's:
// read before its token was written back.
func (o *Observer) unfenced(l Leader) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return l.Token != 0 && o.seenValue != "" && l.Value != o.seenValue && l.Token <= o.seenToken
}

func (o *Observer) remember(l Leader) {
	if l.none() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seenValue = l.Value
	o.seenToken = max(o.seenToken, l.Token)
}

// readOnce is one majority read.
func (o *Observer) readOnce(ctx context.Context) (Leader, error) {
	t0 := time.Now()
	info, err := lease.Inspect(ctx, o.client, o.name)
	if ctx.Err() != nil {
		return Leader{}, ctxErr(ctx)
	}
	if info == nil {
		return Leader{}, err // closed client, bad argument: not the nodes' answer
	}
	quorum := o.client.Internal().Quorum()
	if info.Holder != nil {
		h := info.Holder
		return Leader{ID: h.String(), Metadata: maps.Clone(h.Metadata), Token: info.Token,
			Remaining: info.Remaining, Expires: expires(info, quorum, t0), Value: h.Raw}, nil
	}
	var ready int
	var why []string
	held := map[string]int{} // values seen on nodes that answered
	for _, n := range info.Nodes {
		switch {
		case n.Err != nil:
			why = append(why, fmt.Sprintf("%s: %v", n.Node, n.Err))
		case !n.Ready || n.Quarantine > 0:
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
	silent := len(info.Nodes) - ready
	for _, c := range held {
		if c+silent >= quorum && ready >= quorum {
			return Leader{}, fmt.Errorf("%w: %q: a value is on %d nodes and %d did not answer: it may be on a majority: %s",
				ErrUnknown, o.name, c, silent, strings.Join(why, "; "))
		}
	}
	if ready < quorum {
		return Leader{}, fmt.Errorf("%w: %q: %d of %d nodes could answer, %d needed: %s",
			ErrUnknown, o.name, ready, len(info.Nodes), quorum, strings.Join(why, "; "))
	}
	return Leader{}, fmt.Errorf("%w: %q: no value held on %d of %d nodes", ErrNoLeader, o.name, quorum, len(info.Nodes))
}

// expires estimates when a majority will have dropped the holder's key:
// nodes that do not hold it count already, so it is the k-th lowest PTTL
// among the holders, k = quorum - (nodes - holders).
func expires(info *lease.Info, quorum int, t0 time.Time) time.Time {
	var ttls []time.Duration
	for _, n := range info.Nodes {
		if n.Err == nil && n.Value == info.Holder.Raw {
			ttls = append(ttls, n.TTL)
		}
	}
	k := quorum - (len(info.Nodes) - len(ttls))
	if k < 1 || k > len(ttls) {
		return time.Time{}
	}
	slices.Sort(ttls)
	if ttls[k-1] <= 0 {
		return time.Time{} // no TTL (a foreign key without expiry)
	}
	return t0.Add(ttls[k-1])
}

// ctxErr is ctx.Err(), joined with its cause when that says more.
func ctxErr(ctx context.Context) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause == nil || cause == err {
		return err
	}
	return errors.Join(err, cause)
}
