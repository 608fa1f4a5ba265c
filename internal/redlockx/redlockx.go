// Package redlockx is the seam between package redlock and the packages
// built on it in this module (lease, observer, election, cmd/redlease): the
// typed interface [Client], which redlock.Client.Internal returns, and the
// acquisition options only they set ([ReleaseNotice], [ExtendWait]). It is
// strictly for their use, as client-go's resourcelock.Interface is for its
// leaderelection code: nothing outside this module can import it, and
// users of redlock need none of it. Package redlock implements it; this
// package imports nothing of redlock, so that redlock can import it.
package redlockx

import (
	"context"
	"time"

	"github.com/redlease/redlease/internal/quorum"
	"github.com/redlease/redlease/internal/reach"
)

// Client is what the packages built on redlock use of a redlock.Client
// beyond its API. Its methods are safe for concurrent use.
type Client interface {
	// Quorum is the number of votes a lock of the client needs: N/2+1
	// of its nodes (of one bucket's copies, on a bucketed cluster).
	Quorum() int

	// Nodes returns the nodes' names (redlock.NodeResult.Node), in the
	// order given to New.
	Nodes() []string

	// Publish sends message on channel to every node at once and returns
	// how many nodes took it, waiting at most NodeTimeout. On a bucketed
	// cluster, a notice channel (internal/notice.Channel) is carried by
	// the slots of its key's copies.
	Publish(ctx context.Context, channel, message string) (int, error)

	// Subscribe listens on channel on every node (on a bucketed cluster,
	// a notice channel in the slots of its key's copies, where the
	// release of the key publishes). Nodes that are down are retried by
	// go-redis in the background. The subscriptions are made
	// concurrently: Subscribe returns once a majority of nodes were
	// tried, or after NodeTimeout, so a silent node delays nothing. The
	// subscription has a goroutine per node; its Close does not wait for
	// them (one stuck in a silent node's connection set-up ends at
	// go-redis's socket timeouts), the client's Close does.
	Subscribe(ctx context.Context, channel string) (Subscription, error)

	// LastMajority is when a majority of the client's nodes last
	// answered a request (a vote of any kind, a quarantined one
	// included), on the monotonic clock; the zero Time when that never
	// happened. The health checks of package election read it.
	LastMajority() time.Time

	// Heard is what the client last heard from each of its voters (one
	// bucket's copies on a bucketed cluster), in the order of its nodes.
	Heard() []reach.Node

	// Outcome sums an event's error up in one word, the value of
	// redlock.Event.Outcome (see there), for the events the packages
	// built on redlock report themselves.
	Outcome(err error) string
}

// Notice is one message received by a [Subscription]: the node it came
// from (its stable name, as redlock.NodeResult.Node has it) and its payload.
type Notice struct {
	Node    string
	Payload string
}

// Subscription receives the messages published on one channel on every
// node, until Close (which is safe twice). Its channel is never closed.
type Subscription interface {
	C() <-chan Notice
	Close() error
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

// ErrNotAwaited is the Err of a redlock.NodeResult whose node was still
// answering when the other nodes' answers had decided the outcome. It says
// nothing about that node: it may be healthy, only slower.
var ErrNotAwaited = quorum.ErrNotAwaited

// AcquireOptions are what a redlock.AcquireOption sets for one
// acquisition. [Value] and redlock.WithRetry set the first two; the
// others are set by [ReleaseNotice] and [ExtendWait]. All but WithRetry
// only the packages of this module can name.
type AcquireOptions struct {
	// Value makes the lock's value from an attempt's nonce (nil: the
	// nonce itself).
	Value func(nonce string) string
	// Retry is the retry policy of an Acquire (nil: Config.Retry).
	Retry func(attempt int) (delay time.Duration, ok bool)
	// NoticeChannel, when set, is the channel that the lock's release
	// PUBLISHes NoticeMessage on.
	NoticeChannel, NoticeMessage string
	// ExtendWait bounds each request of the lock's extensions instead of
	// NodeTimeout, when longer.
	ExtendWait time.Duration
}

// Value is the acquisition option (a redlock.AcquireOption) that makes
// the lock's value from the random nonce of each attempt (at least 128
// bits from crypto/rand, base64url). The value must contain the nonce, so
// that every attempt's value is unique; the lease package uses it to
// carry the holder's identity (internal/notice.EncodeValue).
func Value(f func(nonce string) string) func(*AcquireOptions) {
	return func(o *AcquireOptions) { o.Value = f }
}

// ReleaseNotice is the acquisition option (a redlock.AcquireOption) that
// makes the lock's release PUBLISH message on channel, on every node where
// it deleted the lock (an SPUBLISH in the slot of each copy on a cluster),
// so that waiters can retry at once.
func ReleaseNotice(channel, message string) func(*AcquireOptions) {
	return func(o *AcquireOptions) { o.NoticeChannel, o.NoticeMessage = channel, message }
}

// ExtendWait is the acquisition option (a redlock.AcquireOption) that makes
// every extension of the lock (Lock.Extend, Client.ExtendAll) wait up to
// wait, instead of NodeTimeout, for the nodes' answers when wait is
// longer; an extension still returns as soon as a majority agreed.
// ExtendAll waits as long as the shortest wait of the locks it carries. A
// longer wait costs no safety: the new validity counts from the start of
// the extension, and one that ends after the lock's local deadline loses
// the lock rather than reviving it. The lease package refreshes with it: a
// process that refreshes thousands of leases, or one short of CPU, reads
// its replies late, and NodeTimeout would fail refreshes the nodes had
// granted.
func ExtendWait(wait time.Duration) func(*AcquireOptions) {
	return func(o *AcquireOptions) { o.ExtendWait = wait }
}

// QuarantineLog is the message of redlock.New's one log record about the
// nodes that do not vote yet, naming the library's way out
// (Client.Bootstrap). The CLI drops that record from its clients' logs and
// says it in its own terms (its --bootstrap flag).
const QuarantineLog = "nodes are quarantined: they have no marker, or restarted, and may have forgotten locks; they vote after the quarantine"
