package lease

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/redlease/redlease/internal/lockrule"
	"github.com/redlease/redlease/internal/logx"
	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/internal/permitkey"
	"github.com/redlease/redlease/redlock"
)

// Defaults of [Config] that no other field sets (see each field).
const (
	defaultTTL        = 10 * time.Second
	defaultRetryDelay = 100 * time.Millisecond
)

// Config tunes a lease. The zero value of every field means its default,
// documented on the field. [Acquire]
// copies the Config (and encodes ID and Metadata) before it starts:
// changing it, or its Metadata map, afterwards has no effect. A Config may
// be shared by goroutines as long as none modifies it.
type Config struct {
	// TTL is the time-to-live of the lease's keys on the nodes, set again on
	// every refresh. A holder that stops refreshing (it crashed, or lost its
	// network) leaves the keys to expire after at most TTL. It must be a
	// whole number of milliseconds, at most the client's MaxTTL, and longer
	// than the client's NodeTimeout*2 + drift (redlock's rule; Acquire
	// checks it). Default: 10s.
	TTL time.Duration

	// RenewInterval is how long after the start of the last successful
	// acquire or refresh the next refresh starts. Shorter means more
	// traffic and more retries before the deadline. Default: TTL/3.
	RenewInterval time.Duration

	// RetryInterval is how long after the start of a failed refresh the
	// next one starts (at once, if the failed one took longer); refreshes
	// are retried until one succeeds or the lease ends. It is also how long
	// one refresh waits for a majority of the nodes (or the client's
	// NodeTimeout, if that is longer): a refresh returns as soon as a
	// majority agreed, so this matters only when the replies are late, e.g.
	// in a process that refreshes thousands of leases or is short of CPU,
	// and a late yes is as good as a prompt one (the new validity counts
	// from the start of the refresh). It must not exceed RenewInterval.
	// Default: RenewInterval/4 (with the other defaults, about seven
	// retries fit before the lease ends).
	RetryInterval time.Duration

	// SafetyMargin is how long before its validity ends ([Lease.ValidUntil],
	// already net of redlock's drift allowance) the lease gives up: at
	// ValidUntil - SafetyMargin, by a local timer, [Lease.Context] is
	// cancelled and [Lease.Held] turns false. It is the holder's time to
	// notice and stop acting (a goroutine that checks the context between steps, a write already in
	// flight, a GC pause) while the keys are still ours on the nodes, so
	// that nobody else can hold the lease until the holder has stopped.
	// RenewInterval + SafetyMargin must be below TTL - drift. Default:
	// TTL/20 (500ms for the default TTL: several scheduling and GC pauses,
	// and still 5% of the TTL only).
	SafetyMargin time.Duration

	// RetryDelay is the first wait between attempts of [Acquire]; each
	// later wait doubles, up to 8 x RetryDelay, and each is a random time in
	// [d/2, d*3/2] of its mean d, so that contenders desynchronise. A
	// release notice from the holder wakes waiters at once. Default: 100ms.
	RetryDelay time.Duration

	// ID names the holder; redlock.Client.Inspect and the observers of the
	// key report it (redlock.Holder.ID).
	// Any string (any bytes) is allowed. Default: "<hostname>-<pid>".
	ID string

	// Metadata is published with the ID, e.g. the holder's address. ID and
	// Metadata together must encode to at most 4096 bytes in the lock
	// value (escaped as in a URL query, with "id=" and "&m.<key>="
	// framing), which is sent on every acquire, refresh and release;
	// Acquire reports the size when they do not. Default: none.
	Metadata map[string]string

	// Permits, above 1, makes the key the name of a semaphore of Permits
	// permits and the lease one of them: at most Permits holders hold at
	// once. Permit i is a plain lease on a key of its own (permit 0 on the
	// key itself, permit i on "<key>:permit:<i>"): held on a majority, refreshed, fenced and lost exactly like a lease
	// on one key; its Token orders the holders of that permit only.
	// [Lease.Holder] says which permit is held (Key, Permit). [Acquire]
	// starts at a random permit and tries each in turn, then waits for a
	// release notice naming a permit; [TryAcquire] tries each once. Every
	// client of a semaphore should use the same Permits: lowering it is
	// safe only once the holders of the permits above the new value have
	// ended (docs/design.md §5.3). At most 1024. Default: 1 (0 and 1: a
	// plain lease on the key, which is also permit 0 of any semaphore).
	Permits int

	// Logger receives the lease's logs with stable keys (key, token,
	// validity, elapsed, error). Default: the client's logger
	// (redlock.Config.Logger), so that one logger set on the client
	// receives the logs of everything built on it.
	Logger hclog.Logger
}

// Resolve returns c as [Acquire] uses it with client: every default
// filled in (the Logger is the client's unless one is set), or the first
// reason Acquire would refuse it (an error wrapping
// redlock.ErrInvalidArgument that names the values, or the nil client).
// Resolve checks c alone and against the client's settings (MaxTTL,
// NodeTimeout, drift). election.New resolves its lease's
// Config with it, so that a bad one fails New rather than every campaign.
func (c Config) Resolve(client *redlock.Client) (Config, error) {
	if err := c.validateFor(client); err != nil {
		return c, err
	}
	return c.withClient(client), nil
}

// withDefaults returns c with every zero field set to its default (some
// defaults depend on other fields: RenewInterval on TTL, RetryInterval on
// RenewInterval, SafetyMargin on TTL).
func (c Config) withDefaults() Config {
	if c.TTL == 0 {
		c.TTL = defaultTTL
	}
	if c.RenewInterval == 0 {
		c.RenewInterval = c.TTL / 3
	}
	if c.RetryInterval == 0 {
		c.RetryInterval = c.RenewInterval / 4
	}
	if c.SafetyMargin == 0 {
		c.SafetyMargin = c.TTL / 20
	}
	if c.RetryDelay == 0 {
		c.RetryDelay = defaultRetryDelay
	}
	if c.ID == "" {
		c.ID = defaultID()
	}
	c.Logger = logx.Flat(c.Logger) // nil: a null logger
	return c
}

// withClient is withDefaults, with the defaults that come from the client
// too: the Logger is the client's unless one is set.
func (c Config) withClient(client *redlock.Client) Config {
	if c.Logger == nil {
		c.Logger = client.Config().Logger
	}
	return c.withDefaults()
}

// defaultID is "<hostname>-<pid>".
func defaultID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return host + "-" + strconv.Itoa(os.Getpid())
}

// validate reports the first invalid setting, with its value, as an error
// wrapping redlock.ErrInvalidArgument. Zero values are valid (they mean
// defaults); the rules apply to the values with defaults filled in.
// validate checks the Config alone; [Acquire] also checks it against the
// client's settings (MaxTTL, NodeTimeout, drift).
func (c Config) validate() error {
	c = c.withDefaults()
	switch {
	case c.TTL < 0:
		return fmt.Errorf("%w: TTL (%s) must not be negative", errInvalidConfig, c.TTL)
	case c.TTL%time.Millisecond != 0:
		return fmt.Errorf("%w: TTL (%s) must be a whole number of milliseconds", errInvalidConfig, c.TTL)
	case c.RenewInterval < 0:
		return fmt.Errorf("%w: RenewInterval (%s) must not be negative", errInvalidConfig, c.RenewInterval)
	case c.RetryInterval < 0:
		return fmt.Errorf("%w: RetryInterval (%s) must not be negative", errInvalidConfig, c.RetryInterval)
	case c.SafetyMargin < 0:
		return fmt.Errorf("%w: SafetyMargin (%s) must not be negative", errInvalidConfig, c.SafetyMargin)
	case c.Permits < 0 || c.Permits > permitkey.Max:
		return fmt.Errorf("%w: Permits (%d) must be between 0 and %d", errInvalidConfig, c.Permits, permitkey.Max)
	case c.RetryDelay < 0:
		return fmt.Errorf("%w: RetryDelay (%s) must not be negative", errInvalidConfig, c.RetryDelay)
	case c.RenewInterval >= c.TTL:
		return fmt.Errorf("%w: RenewInterval (%s) must be below TTL (%s)", errInvalidConfig, c.RenewInterval, c.TTL)
	case c.RetryInterval == 0:
		return fmt.Errorf("%w: RetryInterval (%s) must be positive (RenewInterval %s is too short for the default)",
			errInvalidConfig, c.RetryInterval, c.RenewInterval)
	case c.RetryInterval > c.RenewInterval:
		return fmt.Errorf("%w: RetryInterval (%s) must not exceed RenewInterval (%s)", errInvalidConfig, c.RetryInterval, c.RenewInterval)
	case c.SafetyMargin >= c.TTL-c.RenewInterval:
		return fmt.Errorf("%w: SafetyMargin (%s) must be below TTL - RenewInterval (%s - %s = %s): the lease would end before its first refresh",
			errInvalidConfig, c.SafetyMargin, c.TTL, c.RenewInterval, c.TTL-c.RenewInterval)
	}
	if n := len(notice.EncodeHolder(c.ID, c.Metadata)); n > notice.MaxHolderSize {
		return fmt.Errorf("%w: ID and Metadata encode to %d bytes, above the limit of %d", errInvalidConfig, n, notice.MaxHolderSize)
	}
	return nil
}

// validateFor is validate, then a check of the Config (with
// defaults filled in) against the settings of the client it is to be used
// with: the TTL by redlock's own rule (at most MaxTTL, above NodeTimeout*2
// + drift), and room for a refresh before the lease would end. [Acquire]
// and [TryAcquire] call it; so does [Config.Resolve].
func (c Config) validateFor(client *redlock.Client) error {
	if err := c.validate(); err != nil {
		return err
	}
	if client == nil {
		return fmt.Errorf("%w: nil *redlock.Client", redlock.ErrInvalidArgument)
	}
	c = c.withDefaults()
	cc := client.Config()
	if p := lockrule.TTLProblem(c.TTL, cc.NodeTimeout, cc.MaxTTL, cc.DriftFactor); p != "" {
		return fmt.Errorf("%w: TTL does not suit the client: %s", errInvalidConfig, p)
	}
	if drift := lockrule.Drift(c.TTL, cc.DriftFactor); c.RenewInterval+c.SafetyMargin >= c.TTL-drift {
		return fmt.Errorf("%w: RenewInterval + SafetyMargin (%s + %s) must be below TTL - drift (%s - %s): the lease would end before its first refresh",
			errInvalidConfig, c.RenewInterval, c.SafetyMargin, c.TTL, drift)
	}
	return nil
}
