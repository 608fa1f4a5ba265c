package quarantine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Node is one voter as the [Guard] sees it (redlock's node); strictly for
// use by the guard. Its methods are safe for concurrent use.
type Node interface {
	// Name names the node in logs, as it is named now.
	Name() string
	// Identity is what the node's answers said about its server.
	Identity() *Identity
	// RaiseFloor runs raise.lua on the node: its fencing floor becomes at
	// least floor if its marker is still incarnation created. It reports
	// whether it did.
	RaiseFloor(ctx context.Context, created, floor int64) (bool, error)
	// NamedByServer reports whether the node is named by the server that
	// answered (a Sentinel group's client), rather than by its options.
	NamedByServer() bool
	// Rename names the node by a server's run_id (see [RunIDText]) at once.
	Rename(server int64)
	// LearnName asks the server whose run_id begins as server for the
	// address it was reached on, and names the node by it (one round
	// trip, bounded by ctx).
	LearnName(ctx context.Context, server int64)
}

// Probed is one node's answer to probe.lua in a readiness pass.
type Probed struct {
	Node   Node
	Marker Marker
}

// GuardConfig is what a [Guard] is given by its Client.
type GuardConfig struct {
	Quorum      int           // votes that make a majority of one set
	SetSize     int           // nodes per set: the voters of one key
	NodeTimeout time.Duration // bounds each raise.lua request
	Log         hclog.Logger
	// WG counts the guard's goroutines (the Client's requests in
	// flight, which Close waits for).
	WG *sync.WaitGroup
	// Probe runs probe.lua on every node at once and returns their
	// answers, set after set (SetSize each); it also starts the
	// quarantine of a node that has no marker. Nil: no passes (the
	// quarantine is off).
	Probe func(ctx context.Context) []Probed
}

// Guard is the quarantine guard of a Client's nodes (docs/design.md
// §4.7-§4.9, S6): it raises the fencing floor of a node that may have
// forgotten votes before the node counts again, runs the readiness passes
// that do so when no acquisition does, and logs a node's change of server
// or marker once. The nodes vote no (the scripts decide) until their
// quarantine is over and their floor is raised. The zero Guard, or one
// without Probe, makes no passes; call [Guard.Init] before use. Safe for
// concurrent use.
type Guard struct {
	// Ready says when the next readiness pass is due.
	Ready   Readiness
	cfg     GuardConfig
	raising atomic.Bool // a pass is running
}

// Init gives g what it needs; call it once, before g is used.
func (g *Guard) Init(cfg GuardConfig) { g.cfg = cfg }

// PassIfDue starts a readiness pass when one is due ([Readiness.PassDue]);
// every fan-out of the Client calls it.
func (g *Guard) PassIfDue() {
	if g.cfg.Probe == nil || g.raising.Load() {
		return
	}
	if g.Ready.PassDue(time.Now().UnixNano()) {
		g.Pass()
	}
}
