package scripts

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/rediserr"
)

// Call is one script call's whole command line, EVALSHA digest numkeys
// keys... args..., and the same line as FCALL of its function in the
// library (FCALL function numkeys keys... args...), built once and shared
// by every node whose keys are the same (all standalone nodes of a
// fan-out), so that a fan-out builds its arguments once rather than once
// per node. go-redis only reads the arguments of a command, so nodes may
// send one Call at once. A Call is not changed once made.
type Call struct {
	script *redis.Script
	argv   []any
	fargv  []any // the FCALL line
	nkeys  int
	buf    [2 * callInline]any // argv's and fargv's storage when they fit: one allocation
}

// callInline is the longest command line kept inside a Call (the acquire
// script's: 3 + 3 keys + 6 arguments).
const callInline = 12

// digests are the scripts' digests, and functions their functions'
// names, boxed once for the command lines.
var digests, functions = func() (map[*redis.Script]any, map[*redis.Script]any) {
	d := make(map[*redis.Script]any, len(catalogue))
	f := make(map[*redis.Script]any, len(catalogue))
	for s := range catalogue {
		d[s], f[s] = s.Hash(), FunctionName(s)
	}
	return d, f
}()

// NewCall is the call of script s on keys with args.
func NewCall(s *redis.Script, keys []string, args ...any) *Call {
	sc := &Call{script: s, nkeys: len(keys)}
	sc.build(keys, args)
	return sc
}

// build sets both command lines from keys and args.
func (sc *Call) build(keys []string, args []any) {
	n := 3 + len(keys) + len(args)
	argv, fargv := sc.buf[:0:callInline], sc.buf[callInline:callInline]
	if n > callInline {
		argv, fargv = make([]any, 0, n), make([]any, 0, n)
	}
	argv = append(argv, "evalsha", digests[sc.script], len(keys))
	for _, k := range keys {
		argv = append(argv, k)
	}
	sc.argv = append(argv, args...)
	fargv = append(fargv, "fcall", functions[sc.script])
	sc.fargv = append(fargv, sc.argv[2:]...)
}

// WithKeys is the same call on other keys (a cluster node's, in its tag),
// as many as the call has.
func (sc *Call) WithKeys(keys ...string) *Call {
	out := &Call{script: sc.script, nkeys: sc.nkeys}
	out.build(keys, sc.argv[3+sc.nkeys:])
	return out
}

// Script is the call's script.
func (sc *Call) Script() *redis.Script { return sc.script }

// Argv is the command line, EVALSHA first; the caller must not change it.
func (sc *Call) Argv() []any { return sc.argv }

// FcallArgv is the command line as FCALL of the script's function in the
// library; the caller must not change it.
func (sc *Call) FcallArgv() []any { return sc.fargv }

// Argvs is the command line of the mode: FCALL when fcall, else EVALSHA.
func (sc *Call) Argvs(fcall bool) []any {
	if fcall {
		return sc.fargv
	}
	return sc.argv
}

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

// Run sends the call alone: in FCALL mode (fcall true), FCALL, and where
// the server does not have the function, FUNCTION LOAD and FCALL again; if
// the library cannot be loaded (an ACL that lets an operator load it,
// after a restart), it turns fcall off (the node keeps the EVALSHA
// scripts from now on) and runs the EVAL script. Otherwise EVALSHA, then
// EVAL if the server does not have the script. The error is go-redis's,
// not classified.
func (sc *Call) Run(ctx context.Context, c redis.UniversalClient, fcall *atomic.Bool) (any, error) {
	if fcall.Load() {
		res, err := c.Do(ctx, sc.fargv...).Result()
		if !NoScript(err) {
			return res, err
		}
		if Reload(ctx, c, fcall) {
			return c.Do(ctx, sc.fargv...).Result()
		}
	}
	res, err := c.Do(ctx, sc.argv...).Result()
	if NoScript(err) {
		res, err = c.Do(ctx, sc.EvalArgv()...).Result()
	}
	return res, err
}

// Reload is what a node in FCALL mode does once a call met "Function not
// found" (the library gone: a restart, FUNCTION FLUSH): it loads the
// library again and reports true, the call to be sent again by FCALL; or,
// where the library cannot be loaded (an ACL that lets an operator load
// it), it turns fcall off, the node in EVALSHA mode from now on, and
// reports false. Call.Run and redlock's pipelines share it.
func Reload(ctx context.Context, c redis.UniversalClient, fcall *atomic.Bool) bool {
	if LoadLibrary(ctx, c) == nil {
		return true
	}
	fcall.Store(false)
	return false
}

// NoScript reports a NOSCRIPT error reply, or FCALL's "Function not
// found": the server does not have the script or the library (restarted
// or flushed), and EVAL must send its source or FUNCTION LOAD the library.
func NoScript(err error) bool {
	c, ok := rediserr.Of(err)
	return ok && c == rediserr.NoScript
}
