package redlock

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redlease/redlease/internal/nodecheck"
	"github.com/redlease/redlease/internal/placement"
	"github.com/redlease/redlease/internal/redlockx"
	"github.com/redlease/redlease/internal/scripts"
)

// Unexported values that the external tests (package redlock_test) use.
const (
	ConfStale = nodecheck.Stale
)

// FenceScript is the fencing write-back script, so that tests can count
// its calls (IsScriptCall).
var FenceScript = scripts.Fence

// AcquireGate is a go-redis hook that holds the client's acquire requests
// (acquire.lua) while armed by Hold, so that a test can make a node's grant
// come after the acquisition returned.
type AcquireGate struct{ held atomic.Pointer[chan struct{}] }

// Hold holds the acquire requests from now on until open is called.
func (g *AcquireGate) Hold() (open func()) {
	ch := make(chan struct{})
	g.held.Store(&ch)
	return func() { g.held.Store(nil); close(ch) }
}

func (g *AcquireGate) DialHook(next redis.DialHook) redis.DialHook { return next }
func (g *AcquireGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if IsScriptCall(cmd, scripts.Acquire) {
			if ch := g.held.Load(); ch != nil {
				<-*ch
			}
		}
		return next(ctx, cmd)
	}
}
func (g *AcquireGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// IsScriptCall reports whether cmd calls script s: EVALSHA of its digest,
// or FCALL of its function (FCALL mode).
func IsScriptCall(cmd redis.Cmder, s *redis.Script) bool {
	a := cmd.Args()
	if len(a) < 2 {
		return false
	}
	switch cmd.Name() {
	case "evalsha":
		return a[1] == s.Hash()
	case "fcall":
		return a[1] == scripts.FunctionName(s)
	}
	return false
}

// RunAcquireScript runs the acquire script once on c, as one attempt of
// value on key would (quarantine on, fencing on), and returns its reply.
func RunAcquireScript(ctx context.Context, c redis.UniversalClient, key, value string, ttl, maxTTL time.Duration) ([]any, error) {
	sc := scripts.NewCall(scripts.Acquire, []string{key, key + ":fence", markerKey}, value, ttl.Milliseconds(), maxTTL.Milliseconds(),
		"1", strconv.FormatInt(counterTTLFactor*maxTTL.Milliseconds(), 10), "0")
	res, err := sc.Run(ctx, c, new(atomic.Bool)) // EVALSHA
	if err != nil {
		return nil, err
	}
	a, _ := res.([]any)
	return a, nil
}

// ScriptArgv is the command line (EVALSHA digest numkeys keys... args...)
// that c sends to a standalone node for one call of a script, from the
// builders acquire.go and lock.go use: "acquire" (an attempt of value on
// key for ttl), "extend" (of the lock of value on key, to ttl, in the
// common case: its counter's TTL set recently) or "release" (without a
// notice).
func (c *Client) ScriptArgv(script, key, value string, ttl time.Duration) []any {
	return c.scriptCall(script, key, value, ttl).Argv()
}

// ScriptFcallArgv is ScriptArgv's call as a node in FCALL mode receives
// it (FCALL function numkeys keys... args...).
func (c *Client) ScriptFcallArgv(script, key, value string, ttl time.Duration) []any {
	return c.scriptCall(script, key, value, ttl).FcallArgv()
}

func (c *Client) scriptCall(script, key, value string, ttl time.Duration) *scriptCall {
	switch script {
	case "acquire":
		return c.args.acquireCall(key, value, ttl)
	case "extend":
		return c.args.extendCall(key, value, ttl, false)
	case "release":
		return releaseCall(key, value, "", "", "0")
	}
	panic("ScriptArgv: no script " + script)
}

// VoteOf names r's vote as the tests compare it: "yes", "no", "error" or
// "quarantined".
func VoteOf(r NodeResult) string { return r.vote().String() }

// QuarantinedNodes returns the nodes of qe that refused to vote because
// they may have forgotten their locks.
func QuarantinedNodes(qe *QuorumError) []NodeResult {
	var out []NodeResult
	for _, n := range qe.Nodes {
		if n.Quarantined {
			out = append(out, n)
		}
	}
	return out
}

// TTL is the TTL the lock was acquired (or last extended) with.
func (l *Lock) TTL() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ttl
}

// AcquiredAt is when the acquisition that produced this lock started.
func (l *Lock) AcquiredAt() time.Time { return l.acquiredAt }

// Remaining is the validity left, 0 once the lock is no longer held.
func (l *Lock) Remaining() time.Duration { return l.remaining() }

// Replica is where one copy of the locks of a cluster Client lives.
type Replica = placement.Replica

// Placement reports which master serves each copy of each bucket now, and
// whether two copies of one bucket share a master.
func (c *Client) Placement(ctx context.Context) ([]Replica, bool) { return c.placement.Now(ctx) }

// The errors in the *QuorumError of an Extend or a Release that left the
// lock as it was.
var (
	ErrNotExtended = errNotExtended
	ErrNotReleased = errNotReleased
)

// Unexported defaults and limits the tests compare against.
const (
	DefaultNodeTimeout = defaultNodeTimeout
	DefaultDriftFactor = defaultDriftFactor
	DefaultRetryDelay  = defaultRetryDelay
	DefaultMaxTTL      = defaultMaxTTL
	MinDrift           = minDrift
	CounterTTLFactor   = counterTTLFactor
	MaxExtendBatch     = maxExtendBatch
)

// ErrNotAwaited is the Err of a node not waited for.
var ErrNotAwaited = redlockx.ErrNotAwaited

// Settled reports whether every acquire request of l's acquisition has
// finished. The acquisition returns at a majority; a request to another
// node may still be on its way and grant the lock there later.
func (l *Lock) Settled() bool {
	for i := range l.strag.running {
		if l.strag.acquiring(i) {
			return false
		}
	}
	return true
}
