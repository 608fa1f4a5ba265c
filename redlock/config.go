package redlock

import (
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/redlease/redlease/internal/clusterkey"
	"github.com/redlease/redlease/internal/lockrule"
	"github.com/redlease/redlease/internal/logx"
)

// Defaults of [Config], documented on its fields (internal/lockrule has
// those the CLI shows too).
const (
	defaultNodeTimeout = lockrule.DefaultNodeTimeout
	defaultDriftFactor = lockrule.DefaultDriftFactor
	defaultRetryDelay  = 100 * time.Millisecond
	defaultMaxTTL      = lockrule.DefaultMaxTTL
	minDrift           = lockrule.MinDrift
	// counterTTLFactor times MaxTTL is the TTL of a fencing counter: a key
	// locked again within it continues its own counter; after it, the
	// counter starts again above the node's highest token, so tokens still
	// increase (docs/design.md §4.6).
	counterTTLFactor = 10
)

// Config tunes a [Client]. The zero value of every field means its
// default, given on each field. A Config is copied by [New]: changing it
// afterwards has no effect.
type Config struct {
	// NodeTimeout bounds every request to one node, enforced by redlock
	// itself whatever the go-redis client's own timeouts and retries are.
	// A node that has not answered within it counts as a "no" vote.
	// It should be small next to the TTL: a few round trips. The
	// refreshes of the lease package may wait longer for late replies.
	// Default: 50ms.
	NodeTimeout time.Duration

	// DriftFactor is the share of a TTL allowed for clock drift between
	// this process and the servers: drift = TTL*DriftFactor + 2ms (the
	// clock resolution and scheduling slack that a factor alone would miss
	// on short TTLs), and a lock is believed held until start + TTL -
	// drift. From 0 to 0.5, excluded. Default: 0.01.
	DriftFactor float64

	// RetryDelay is the first delay between attempts in [Client.Acquire].
	// The default strategy backs off exponentially with jitter: the n-th
	// delay (from 0) is a random time in [d/2, d*3/2] for
	// d = min(RetryDelay * 2^n, 8 * RetryDelay), so that contenders
	// desynchronise and a failing deployment is not hammered. Default: 100ms.
	RetryDelay time.Duration

	// Retry, when set, is the retry policy of every [Client.Acquire] call
	// that has no [WithRetry] of its own: after attempt failed attempts
	// (1, 2, ...), it returns the delay before the next one, or false to
	// stop. It may be called by many goroutines at once. Default:
	// exponential backoff with jitter from RetryDelay (see there), capped
	// at 8 * RetryDelay, until the context ends.
	Retry func(attempt int) (delay time.Duration, ok bool)

	// MinValidity is the least validity an acquisition must leave after its
	// own round trips; a lock that would be valid for less is released at
	// once and reported not acquired. Default: 0 (any positive validity).
	MinValidity time.Duration

	// MaxTTL is the largest TTL any client may use on these nodes, and the
	// quarantine of a node that may have forgotten its locks (restarted
	// empty, flushed, replaced, failed over): such a node votes no for
	// MaxTTL, by which time every lock it granted has expired. Every client
	// sharing the nodes must use the same MaxTTL: the node keeps the value of
	// the client that started its quarantine and refuses longer TTLs.
	// Default: 30s.
	MaxTTL time.Duration

	// DisableQuarantine turns the forgetful-node quarantine off: a node
	// votes again as soon as it answers. Only safe when every node persists
	// every write before answering (appendonly yes, appendfsync always) and
	// is never replaced by a replica; otherwise a restart can grant a lock
	// twice. Default: false (quarantine on).
	DisableQuarantine bool

	// DisableFunctions keeps every node on the EVALSHA scripts, which run
	// the full quarantine check (INFO server and replication) on every
	// acquisition. By default [New] loads the scripts as one Redis
	// Function library (FUNCTION LOAD; named by a hash of its code, so
	// versions coexist) on each standalone node and calls them by FCALL:
	// the library's loaded copy carries an incarnation token that also
	// catches DEBUG RELOAD of an old RDB and needs no INFO server per
	// acquisition. A node that refuses FUNCTION (ACL, an old server, a
	// proxy, miniredis) keeps EVALSHA by itself; New logs each node's
	// mode. Note that an operator's FUNCTION FLUSH then quarantines the
	// node like a restart (docs/design.md §4.7.5). Default: false.
	DisableFunctions bool

	// DisableFencing turns fencing tokens off: no counter key is kept per
	// lock key, and [Lock.Token] is 0. Default: false (fencing on). With
	// fencing on, each lock key has a counter beside it ("<key>:fence")
	// whose TTL is 10 x MaxTTL, refreshed by every acquisition and
	// extension of the key (docs/design.md §4.6).
	DisableFencing bool

	// AllowEviction lets [New] accept nodes whose maxmemory-policy may evict
	// keys, and lets them vote. An evicted lock key is a lock granted
	// twice, so by default such nodes are refused: by New, and while the
	// client is in use (the policy is re-checked about once a second while
	// requests flow, before a vote once the last check began 5s ago, so a
	// change is seen within 5s): their votes then count as errors naming
	// the policy. Default: false.
	AllowEviction bool

	// Buckets is, for a Client made by [NewCluster], the number of buckets
	// B that keys are spread over, each with its own n slots, so that lock
	// traffic reaches every master; from 1 to 1024. With 1, copy i of every
	// lock lives in the slot of one fixed tag, as before buckets existed,
	// which puts all lock traffic on n slots. Like n, every client sharing
	// the cluster must use the same B (NewCluster refuses another). [New]
	// ignores it. Default: 16.
	Buckets int

	// Logger receives the client's logs, one record per event, with the
	// stable keys of docs/observability.md (key, node, token, validity,
	// elapsed, error). A *slog.Logger plugs in through [SlogLogger].
	// The leases, electors and observers built on the client log to it
	// too, unless their own Config sets a Logger. Default: a null logger
	// (silent).
	Logger hclog.Logger

	// Hooks, when set, is called with a typed [Event] for every
	// acquisition attempt, extension, release and node error of the
	// client, and for every lost lease, term and change of leader seen by
	// an elector of the leases and electors built on it: one function sees
	// each event of the process once. It is the path for metrics and logs
	// (docs/notifications.md compares it with an elector's callbacks and
	// events and an observer's Watch); contrib/prometheus and contrib/otel
	// are ready-made adapters (docs/observability.md lists their metrics):
	// Hooks: adapter.Observe. It is called synchronously, where the event
	// happens, from the goroutine of the call, lease or elector: it must be
	// safe for concurrent use, must not block, and must not call back into
	// the Client (increment a counter, observe a histogram, and return).
	// The Event is a value; it may be kept. Default: none.
	Hooks func(Event)

	// unsafeOff: guards turned off by a test's negative control
	// (unsafe.go); none in every other use.
	unsafeOff guardsOff
}

func (c Config) withDefaults() Config {
	if c.NodeTimeout == 0 {
		c.NodeTimeout = defaultNodeTimeout
	}
	if c.DriftFactor == 0 {
		c.DriftFactor = defaultDriftFactor
	}
	if c.RetryDelay == 0 {
		c.RetryDelay = defaultRetryDelay
	}
	if c.MaxTTL == 0 {
		c.MaxTTL = defaultMaxTTL
	}
	if c.Buckets == 0 {
		c.Buckets = clusterkey.DefaultBuckets
	}
	c.Logger = logx.Flat(c.Logger) // nil: a null logger
	return c
}

// validate reports the first invalid setting, with its value, as an error
// wrapping [ErrInvalidArgument]. Zero values are valid (they mean defaults).
// New and NewCluster return it before they contact any node.
func (c Config) validate() error {
	c = c.withDefaults()
	switch {
	case c.NodeTimeout < 0:
		return fmt.Errorf("%w: NodeTimeout (%s) must not be negative", ErrInvalidArgument, c.NodeTimeout)
	case c.DriftFactor < 0 || c.DriftFactor >= 0.5:
		return fmt.Errorf("%w: DriftFactor (%g) must be in [0, 0.5)", ErrInvalidArgument, c.DriftFactor)
	case c.RetryDelay < 0:
		return fmt.Errorf("%w: RetryDelay (%s) must not be negative", ErrInvalidArgument, c.RetryDelay)
	case c.MinValidity < 0:
		return fmt.Errorf("%w: MinValidity (%s) must not be negative", ErrInvalidArgument, c.MinValidity)
	case c.MaxTTL < 0:
		return fmt.Errorf("%w: MaxTTL (%s) must not be negative", ErrInvalidArgument, c.MaxTTL)
	case c.Buckets < 1 || c.Buckets > clusterkey.MaxBuckets:
		return fmt.Errorf("%w: Buckets (%d) must be from 1 to %d", ErrInvalidArgument, c.Buckets, clusterkey.MaxBuckets)
	case c.MaxTTL < time.Millisecond:
		return fmt.Errorf("%w: MaxTTL (%s) must be at least 1ms", ErrInvalidArgument, c.MaxTTL)
	case c.NodeTimeout*2+minDrift >= c.MaxTTL:
		return fmt.Errorf("%w: MaxTTL (%s) leaves no TTL above NodeTimeout*2 + drift (%s)",
			ErrInvalidArgument, c.MaxTTL, c.NodeTimeout*2+minDrift)
	}
	return nil
}

// drift is the clock-drift allowance for a TTL (docs/design.md S3).
func (c *Config) drift(ttl time.Duration) time.Duration {
	return lockrule.Drift(ttl, c.DriftFactor)
}

// checkTTL validates a TTL against this configuration: positive, at most
// MaxTTL, and long enough to outlast two node timeouts and the drift.
func (c *Config) checkTTL(ttl time.Duration) error {
	if p := lockrule.TTLProblem(ttl, c.NodeTimeout, c.MaxTTL, c.DriftFactor); p != "" {
		return fmt.Errorf("%w: %s", ErrInvalidArgument, p)
	}
	return nil
}
