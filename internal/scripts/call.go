package scripts

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/rediserr"
)

// Call is one script call's whole command line, EVALSHA digest numkeys
// keys... args..., built once and shared by every node whose keys are the
// same (all standalone nodes of a fan-out), so that a fan-out builds its
// arguments once rather than once per node. go-redis only reads the
// arguments of a command, so nodes may send one Call at once. A Call is
// not changed once made.
type Call struct {
	script *redis.Script
	argv   []any
	nkeys  int
	buf    [callInline]any // argv's storage when it fits: one allocation
}

// callInline is the longest command line kept inside a Call (the acquire
// script's: 3 + 3 keys + 6 arguments).
const callInline = 12

// digests are the scripts' digests, boxed once for the command lines.
var digests = func() map[*redis.Script]any {
	m := make(map[*redis.Script]any, len(catalogue))
	for s := range catalogue {
		m[s] = s.Hash()
	}
	return m
}()

// NewCall is the call of script s on keys with args.
func NewCall(s *redis.Script, keys []string, args ...any) *Call {
	sc := &Call{script: s, nkeys: len(keys)}
	argv := sc.buf[:0]
	if n := 3 + len(keys) + len(args); n > callInline {
		argv = make([]any, 0, n)
	}
	argv = append(argv, "evalsha", digests[s], len(keys))
	for _, k := range keys {
		argv = append(argv, k)
	}
	sc.argv = append(argv, args...)
	return sc
}

// WithKeys is the same call on other keys (a cluster node's, in its tag),
// as many as the call has.
func (sc *Call) WithKeys(keys ...string) *Call {
	out := &Call{script: sc.script, nkeys: sc.nkeys}
	argv := out.buf[:0]
	if len(sc.argv) > callInline {
		argv = make([]any, 0, len(sc.argv))
	}
	argv = append(argv, sc.argv[:3]...)
	for _, k := range keys {
		argv = append(argv, k)
	}
	out.argv = append(argv, sc.argv[3+sc.nkeys:]...)
	return out
}

// Script is the call's script.
func (sc *Call) Script() *redis.Script { return sc.script }

// Argv is the command line, EVALSHA first; the caller must not change it.
func (sc *Call) Argv() []any { return sc.argv }

// NKeys is how many keys the call has.
func (sc *Call) NKeys() int { return sc.nkeys }

// Keys returns the call's keys, for errors.
func (sc *Call) Keys() []string {
	out := make([]string, sc.nkeys)
	for i := range out {
		out[i], _ = sc.argv[3+i].(string)
	}
	return out
}

// EvalArgv is the command line with EVAL and the script's source, for a
// server that does not have the script (a restarted or flushed server).
func (sc *Call) EvalArgv() []any {
	argv := make([]any, len(sc.argv))
	copy(argv, sc.argv)
	argv[0], argv[1] = "eval", Source(sc.script)
	return argv
}

// Run sends the call alone: EVALSHA, then EVAL if the server does not
// have the script. The error is go-redis's, not classified.
func (sc *Call) Run(ctx context.Context, c redis.UniversalClient) (any, error) {
	res, err := c.Do(ctx, sc.argv...).Result()
	if NoScript(err) {
		res, err = c.Do(ctx, sc.EvalArgv()...).Result()
	}
	return res, err
}

// NoScript reports a NOSCRIPT error reply: the server does not have the
// script (restarted or flushed), and EVAL must send its source.
func NoScript(err error) bool {
	c, ok := rediserr.Of(err)
	return ok && c == rediserr.NoScript
}
