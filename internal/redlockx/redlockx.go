// Package redlockx gives the packages built on redlock (lease, observer,
// election) and the CLI what they need of a redlock.Client beyond its
// public API: its configuration and quorum, its TTL and drift rule, the
// change-notice Pub/Sub, extensions with a longer wait, when a lock's
// acquisition started, and the outcome word of the events they report. Package
// redlock implements these and registers them at init (see package link);
// this package only types them. Nothing outside this module can import
// it.
package redlockx

import (
	"context"
	"fmt"
	"time"

	"github.com/redlease/redlease/internal/keycheck"
	"github.com/redlease/redlease/internal/redlockx/link"
	"github.com/redlease/redlease/internal/unsafeopt"
	"github.com/redlease/redlease/redlock"
)

// Notice is one message received by a [Subscription].
type Notice = link.Notice

// Subscription receives the messages published on one channel on every
// node; see [Subscribe].
type Subscription = link.Subscription

// Config returns the client's configuration with defaults filled in.
func Config(c *redlock.Client) redlock.Config { return link.Get().Config(c).(redlock.Config) }

// Defaults returns the Config of a Client made with the zero Config: every
// default filled in (NodeTimeout, DriftFactor, MaxTTL, ...), for a program
// that shows them (the CLI's flags) without copying them.
func Defaults() redlock.Config { return link.Get().Defaults().(redlock.Config) }

// MaxExtendBatch is how many locks one extend_many script call of
// Client.ExtendAll carries at most: the lease scheduler sizes its batches
// and its token bucket by it.
func MaxExtendBatch() int { return link.Get().MaxExtendBatch }

// Quorum is the number of votes a lock of c needs: N/2+1 of its nodes (of
// one bucket's copies, on a bucketed cluster).
func Quorum(c *redlock.Client) int { return link.Get().Quorum(c) }

// Drift is the clock-drift allowance c deducts from a lock of ttl: a lock
// acquired at start is believed held until start + ttl - Drift. It is
// redlock's rule (docs/design.md §4.2, S3); callers never re-derive it.
func Drift(c *redlock.Client, ttl time.Duration) time.Duration { return link.Get().Drift(c, ttl) }

// DriftFor is [Drift] for a Client made from cfg (defaults filled in), for
// a program that checks its settings before it has a Client.
func DriftFor(cfg redlock.Config, ttl time.Duration) time.Duration { return link.Get().Drift(cfg, ttl) }

// CheckTTL reports why c would refuse ttl for a lock (not a whole number
// of milliseconds, above MaxTTL, not above NodeTimeout*2 + drift), as an
// error matching redlock.ErrInvalidArgument that names the values; nil
// when c accepts it.
func CheckTTL(c *redlock.Client, ttl time.Duration) error { return link.Get().CheckTTL(c, ttl) }

// CheckTTLFor is [CheckTTL] for a Client made from cfg (defaults filled
// in).
func CheckTTLFor(cfg redlock.Config, ttl time.Duration) error { return link.Get().CheckTTL(cfg, ttl) }

// Publish sends message on channel to every node of c at once and returns
// how many nodes took it, waiting at most NodeTimeout. On a bucketed
// cluster, a notice channel (internal/notice.Channel) is carried by the
// slots of its key's copies.
func Publish(ctx context.Context, c *redlock.Client, channel, message string) (int, error) {
	return link.Get().Publish(ctx, c, channel, message)
}

// Subscribe listens on channel on every node of c (on a bucketed cluster,
// a notice channel in the slots of its key's copies, where the release of
// the key publishes). Nodes that are down are retried by go-redis in the
// background. The subscriptions are made concurrently: Subscribe returns
// once a majority of nodes were tried, or after NodeTimeout, so a silent
// node delays nothing. The subscription has a goroutine per node; Close
// does not wait for them (one stuck in a silent node's connection set-up
// ends at go-redis's socket timeouts), c's Close does.
func Subscribe(ctx context.Context, c *redlock.Client, channel string) (Subscription, error) {
	return link.Get().Subscribe(ctx, c, channel)
}

// Drain drops the notices already queued on sub, without waiting.
func Drain(sub Subscription) {
	for {
		select {
		case <-sub.C():
		default:
			return
		}
	}
}

// CheckNamed checks the arguments every constructor of a named election
// role (election.New, observer.New) takes: a client, and a name that is a
// valid key.
func CheckNamed(client *redlock.Client, name string) error {
	if client == nil {
		return fmt.Errorf("%w: nil *redlock.Client", redlock.ErrInvalidArgument)
	}
	if p := keycheck.Problem("election name", name); p != "" {
		return fmt.Errorf("%w: %s", redlock.ErrInvalidArgument, p)
	}
	return nil
}

// ReleaseNotice is the acquisition option that makes the lock's release
// PUBLISH message on channel, on every node where it deleted the lock (an
// SPUBLISH in the slot of each copy on a cluster).
func ReleaseNotice(channel, message string) redlock.AcquireOption {
	return link.Get().ReleaseNotice(channel, message).(redlock.AcquireOption)
}

// Extend is l.Extend(ctx, ttl), waiting up to wait (instead of
// NodeTimeout) for the nodes' answers; it still returns as soon as a
// majority agreed. A longer wait costs no safety: the new validity counts
// from the start of the Extend, and an Extend that ends after the lock's
// local deadline loses the lock rather than reviving it. wait <= 0 means
// NodeTimeout.
func Extend(ctx context.Context, l *redlock.Lock, ttl, wait time.Duration) error {
	return link.Get().Extend(ctx, l, ttl, wait)
}

// ExtendAll is c.ExtendAll(ctx, locks), each request waiting up to wait as
// in [Extend]. The lease package refreshes with it: a process that
// refreshes thousands of leases, or one short of CPU, reads its replies
// late, and NodeTimeout would fail refreshes the nodes had granted.
func ExtendAll(ctx context.Context, c *redlock.Client, locks []*redlock.Lock, wait time.Duration) []error {
	return link.Get().ExtendAll(ctx, c, locks, wait)
}

// QuietQuarantine makes a Client made from cfg skip the log record of New
// about quarantined nodes, for a program that says it its own way (the
// CLI: a hint naming its --bootstrap flag).
func QuietQuarantine(cfg *redlock.Config) { link.Get().QuietQuarantine(cfg) }

// UnsafeOff returns the guards a negative control turned off for c
// (internal/unsafeopt); the zero Off in every other use.
func UnsafeOff(c *redlock.Client) unsafeopt.Off { return link.Get().UnsafeOff(c) }

// AcquiredAt is when the acquisition that produced l started (the time
// carries a monotonic reading): the lease package schedules its first
// refresh from it.
func AcquiredAt(l *redlock.Lock) time.Time { return link.Get().AcquiredAt(l) }

// Outcome sums an event's error up in one word, the value of
// redlock.Event.Outcome (see there), for the events the packages built on
// redlock report themselves.
func Outcome(err error) string { return link.Get().Outcome(err) }

// ErrNotAwaited is the Err of a redlock.NodeResult whose node was still
// answering when the other nodes' answers had decided the outcome (the
// CLI does not warn about such a node).
var ErrNotAwaited = link.ErrNotAwaited
