package main

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/redlease/redlease/internal/redlockx"
	"github.com/redlease/redlease/redlock"
)

// redlock.New logs the quarantined nodes naming the library's way out
// (Client.Bootstrap); the CLI's clients do not (connect drops that record:
// quietQuarantine), and the CLI says it in its own terms instead
// (hintQuarantine).

// quietQuarantine is log without redlock.New's record about the
// quarantined nodes (internal/redlockx.QuarantineLog).
func quietQuarantine(log hclog.Logger) hclog.Logger { return quiet{log} }

// quiet drops the records whose message is redlockx.QuarantineLog.
type quiet struct{ hclog.Logger }

func (q quiet) Warn(msg string, args ...any) {
	if msg != redlockx.QuarantineLog {
		q.Logger.Warn(msg, args...)
	}
}

func (q quiet) Log(level hclog.Level, msg string, args ...any) {
	if msg != redlockx.QuarantineLog {
		q.Logger.Log(level, msg, args...)
	}
}

// hintQuarantine says, in one line, why nobody can be elected yet when too
// few of the nodes vote because they are new to redlease (or restarted),
// and how a brand-new deployment skips the wait. It reads the election's
// key on every node (a majority read: it writes nothing but the markers
// that New wrote already).
func hintQuarantine(ctx context.Context, client *redlock.Client, name string, log hclog.Logger) {
	in, err := client.Inspect(ctx, name)
	if in == nil {
		log.Debug("cannot read the nodes' quarantine", "error", err)
		return
	}
	ready, waiting := 0, 0
	var longest time.Duration
	for _, n := range in.Nodes {
		switch {
		case n.Err != nil:
		case !n.Quarantined: // it votes
			ready++
		default:
			waiting++
			longest = max(longest, n.Quarantine)
		}
	}
	quorum := client.Internal().Quorum()
	if waiting == 0 || ready >= quorum {
		return
	}
	log.Warn("nobody can be elected until the nodes' quarantine ends: they are new to redlease (or restarted) "+
		"and vote only --max-ttl after first contact, so that a node that lost its data cannot grant a lock twice; "+
		"on brand-new nodes only, 'redlease bootstrap' or --bootstrap skips the wait (never after a crash or a restart)",
		"quarantined", waiting, "ready", ready, "needed", quorum, "wait", longest.Round(time.Millisecond))
}
