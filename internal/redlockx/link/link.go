// Package link is where package redlock registers, at init, the functions
// that only its sibling packages use (lease, observer, election, the CLI),
// so that they need no exported name in redlock. It imports nothing of
// this module, so redlock can import it; the functions take and return
// `any` (a *redlock.Client, *redlock.Lock, ...). Use the typed wrappers of
// package internal/redlockx, not this package.
package link

import (
	"context"
	"errors"
	"time"

	"github.com/redlease/redlease/internal/unsafeopt"
)

// Notice is one message received by a [Subscription]: the node it came
// from (its stable name, as redlock.Client.Nodes has it) and its payload.
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

// Funcs are the functions redlock registers; see internal/redlockx for
// what each does.
type Funcs struct {
	Config          func(c any) any // a redlock.Config
	Defaults        func() any      // a redlock.Config
	MaxExtendBatch  int
	Quorum          func(c any) int
	Drift           func(c any, ttl time.Duration) time.Duration // c: a *redlock.Client or a redlock.Config
	CheckTTL        func(c any, ttl time.Duration) error         // c: a *redlock.Client or a redlock.Config
	Publish         func(ctx context.Context, c any, channel, message string) (int, error)
	Subscribe       func(ctx context.Context, c any, channel string) (Subscription, error)
	ReleaseNotice   func(channel, message string) any // a redlock.AcquireOption
	Extend          func(ctx context.Context, l any, ttl, wait time.Duration) error
	ExtendAll       func(ctx context.Context, c, locks any, wait time.Duration) []error
	QuietQuarantine func(cfg any)
	UnsafeOff       func(c any) unsafeopt.Off
	AcquiredAt      func(l any) time.Time
	Outcome         func(err error) string
}

// ErrNotAwaited is the Err of a redlock.NodeResult whose node was still
// answering when the other nodes' answers had decided the outcome. It says
// nothing about that node: it may be healthy, only slower.
var ErrNotAwaited = errors.New("not awaited: the outcome was decided without this node")

var funcs *Funcs

// Register is called once, by package redlock's init.
func Register(f Funcs) { funcs = &f }

// Get returns the registered functions. Every importer of internal/redlockx
// imports redlock too, so they are registered before any call.
func Get() *Funcs {
	if funcs == nil {
		panic("redlockx: package redlock is not linked in")
	}
	return funcs
}
