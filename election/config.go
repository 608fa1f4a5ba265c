package election

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/redlease/redlease/internal/logx"

	"github.com/redlease/redlease/lease"
)

// Defaults of [Config] that are not derived from other fields; see each
// field for what it means.
const (
	DefaultTTL         = lease.DefaultTTL // 10s
	DefaultRetryDelay  = 100 * time.Millisecond
	DefaultEventBuffer = 64
)

// Callbacks are called by an [Elector] as its terms begin and end and as
// the leader it sees changes. Every callback is optional. A panic in a
// callback is recovered (and, in OnElected, ends the term); a callback that
// blocks does not stop the elector from ending a term, releasing it, or
// returning from Run (see each callback).
type Callbacks struct {
	// OnElected is called when a term begins, in a goroutine of its own,
	// with a context that lives exactly as long as the term: it is
	// cancelled when the term ends (Resign, Run's context ending, a panic
	// in OnElected, or the lease lost), always before the term's validity
	// ends, with the reason as its cause (context.Cause). Do the leader's
	// work in it, under that context, and return once it is cancelled:
	// the term is released, and another candidate can be elected, only
	// after OnElected returned (or, if it does not, once the validity the
	// term had when it ended has run out). Returning early does not end
	// the term; call [Elector.Resign] for that. The elector does not
	// campaign again while OnElected still runs.
	OnElected func(ctx context.Context, t Term)

	// OnDemoted is called once per term that began, after the term's
	// context was cancelled, after OnElected returned (or the term's
	// validity ran out) and after the term was released, with the reason
	// the term ended: an error matching ErrResigned, ErrStopped,
	// ErrCallbackPanicked, or lease.ErrLeaseLost. It runs in the elector's
	// callback goroutine, in order with OnLeaderChange; the elector does
	// not campaign again until it returned.
	OnDemoted func(t Term, cause error)

	// OnLeaderChange is called for every change of leader the elector
	// sees (its own terms included, from their start), with the new
	// leader, or the zero Leader when nobody leads; the first call gives
	// the state the elector saw first. When no majority of nodes answers,
	// the leader is unknown and no call is made. It runs in the elector's
	// callback goroutine, in the order the changes were seen.
	OnLeaderChange func(l Leader)
}

// Config tunes an [Elector]. The zero value of every field means its
// default; [DefaultConfig] returns a Config with the defaults filled in.
// [New] copies the Config (and its Metadata): changing it afterwards has
// no effect. A Config may be shared by goroutines as long as none modifies
// it.
type Config struct {
	// ID names this candidate; observers and the other candidates see it
	// as the leader's ID. Candidates of one election should have distinct
	// IDs. Default: "<hostname>-<pid>".
	ID string

	// Metadata is published with the ID while this candidate leads, e.g.
	// the address followers forward requests to. ID and Metadata together
	// must encode to at most lease.MaxHolderSize bytes. Default: none.
	Metadata map[string]string

	// TTL is the time-to-live of the leadership key on the nodes, set
	// again at every refresh: a leader that crashed is replaced at most
	// TTL after its last refresh (plus one RetryDelay at worst). At most
	// the client's MaxTTL, longer than its NodeTimeout*2 + drift, a whole
	// number of milliseconds. Default: 10s.
	TTL time.Duration

	// RenewInterval is how often a leader refreshes its term (see
	// lease.Config.RenewInterval). Default: TTL/3.
	RenewInterval time.Duration

	// RetryInterval is the wait after a failed refresh before the next
	// one (see lease.Config.RetryInterval). Default: RenewInterval/4.
	RetryInterval time.Duration

	// SafetyMargin is how long before the term's validity ends the term
	// is given up if it could not be refreshed: OnElected's context is
	// cancelled then, leaving the leader that long to stop before anybody
	// else can be elected (see lease.Config.SafetyMargin). Default: TTL/20.
	SafetyMargin time.Duration

	// RetryDelay is the mean time between two looks of a standby at the
	// election when no change notice arrives: a random time in
	// [RetryDelay/2, RetryDelay*3/2]. Change notices (a leader's release)
	// wake standbys at once, and a standby also looks when the leader's
	// key is due to lapse, so this is the fallback for lost notices.
	// While no majority of nodes answers, the looks back off exponentially
	// (doubling, with the same jitter) up to 8 x RetryDelay, and return to
	// RetryDelay once a majority answers. Default: 100ms.
	RetryDelay time.Duration

	// ResignDelay is how long after it resigned (or its OnElected
	// panicked) the elector stands aside before it campaigns again, so that
	// another candidate takes over. The default is longer than the longest
	// wait of a standby that missed the release notice. Default:
	// 2*RetryDelay.
	ResignDelay time.Duration

	// StopTimeout bounds how long Run, once its context ended and its term
	// (if any) was handed over, waits for callbacks still running (an
	// OnElected that ignores its context, a blocked OnDemoted or
	// OnLeaderChange) before it returns without them; they keep running.
	// Default: TTL.
	StopTimeout time.Duration

	// EventBuffer is the capacity of the [Elector.Events] channel. Events
	// that do not fit are dropped, never waited for ([Elector.Dropped]
	// counts them). Default: 64.
	EventBuffer int

	// Callbacks are called as terms begin and end and as the leader
	// changes. Default: none.
	Callbacks Callbacks

	// Logger receives the elector's logs (and its leases'), one record
	// per event, with the stable keys of docs/observability.md (key, id,
	// token, validity, elapsed, error). A *slog.Logger plugs in through
	// redlock.SlogLogger. Default: a null logger (silent). Measurements
	// (terms, attempts, refreshes, node errors) go to the Hooks of the
	// client (redlock.Config.Hooks).
	Logger hclog.Logger
}

// DefaultConfig returns a Config with every default filled in.
func DefaultConfig() Config {
	return Config{}.withDefaults()
}

func (c Config) withDefaults() Config {
	d := lease.DefaultConfig()
	if c.ID == "" {
		c.ID = d.ID
	}
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	// The lease package's defaults, filled in here so that DefaultConfig
	// shows them.
	l := c.lease().WithDefaults()
	c.RenewInterval, c.RetryInterval, c.SafetyMargin, c.RetryDelay = l.RenewInterval, l.RetryInterval, l.SafetyMargin, l.RetryDelay
	if c.ResignDelay == 0 {
		c.ResignDelay = 2 * c.RetryDelay
	}
	if c.StopTimeout == 0 {
		c.StopTimeout = c.TTL
	}
	if c.EventBuffer == 0 {
		c.EventBuffer = DefaultEventBuffer
	}
	c.Logger = logx.Flat(c.Logger) // nil: a null logger
	return c
}

// Validate reports the first invalid setting, with its value, as an error
// wrapping [ErrInvalidConfig]. Zero values are valid (they mean defaults);
// the rules apply to the values with defaults filled in. Validate checks
// the Config alone; [New] also checks it against the client's settings.
func (c Config) Validate() error {
	switch {
	case c.RetryDelay < 0:
		return fmt.Errorf("%w: RetryDelay (%s) must not be negative", ErrInvalidConfig, c.RetryDelay)
	case c.ResignDelay < 0:
		return fmt.Errorf("%w: ResignDelay (%s) must not be negative", ErrInvalidConfig, c.ResignDelay)
	case c.StopTimeout < 0:
		return fmt.Errorf("%w: StopTimeout (%s) must not be negative", ErrInvalidConfig, c.StopTimeout)
	case c.EventBuffer < 0:
		return fmt.Errorf("%w: EventBuffer (%d) must not be negative", ErrInvalidConfig, c.EventBuffer)
	}
	c = c.withDefaults()
	if err := c.lease().Validate(); err != nil {
		// lease names the bad values (TTL, RenewInterval, RetryInterval,
		// SafetyMargin, ID and Metadata), with the same field names.
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return nil
}

// lease returns the configuration of the leases of the terms.
func (c Config) lease() lease.Config {
	return lease.Config{
		TTL:           c.TTL,
		RenewInterval: c.RenewInterval,
		RetryInterval: c.RetryInterval,
		SafetyMargin:  c.SafetyMargin,
		RetryDelay:    c.RetryDelay,
		ID:            c.ID,
		Metadata:      maps.Clone(c.Metadata),
		Logger:        c.Logger,
	}
}
