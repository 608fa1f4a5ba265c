package redlock

import (
	"context"

	"github.com/redis/go-redis/v9"
	"github.com/redlease/redlease/internal/rediserr"
)

// scriptCall is one script call's whole command line, EVALSHA digest
// numkeys keys... args..., built once and shared by every node whose keys
// are the same (all standalone nodes of a fan-out), so that a fan-out
// builds its arguments once rather than once per node. go-redis only reads
// the arguments of a command, so nodes may send one scriptCall at once.
type scriptCall struct {
	script *redis.Script
	argv   []any
	nkeys  int
	buf    [callInline]any // argv's storage when it fits: one allocation
}

// callInline is the longest command line kept inside a scriptCall (the
// acquire script's: 3 + 3 keys + 6 arguments).
const callInline = 12

// digests are the scripts' digests, boxed once for the command lines.
var digests = map[*redis.Script]any{}

func init() {
	for s := range scriptSource {
		digests[s] = s.Hash()
	}
}

func newCall(s *redis.Script, keys []string, args ...any) *scriptCall {
	sc := &scriptCall{script: s, nkeys: len(keys)}
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

// withKeys is the same call on other keys (a cluster node's, in its tag).
func (sc *scriptCall) withKeys(keys ...string) *scriptCall {
	out := &scriptCall{script: sc.script, nkeys: sc.nkeys}
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

// keys returns the call's keys, for errors.
func (sc *scriptCall) keys() []string {
	out := make([]string, sc.nkeys)
	for i := range out {
		out[i], _ = sc.argv[3+i].(string)
	}
	return out
}

// evalArgv is the command line with EVAL and the script's source, for a
// server that does not have the script (a restarted or flushed server).
func (sc *scriptCall) evalArgv() []any {
	argv := make([]any, len(sc.argv))
	copy(argv, sc.argv)
	argv[0], argv[1] = "eval", scriptSource[sc.script]
	return argv
}

// run sends the call alone: EVALSHA, then EVAL if the server does not
// have the script.
func (sc *scriptCall) run(ctx context.Context, c redis.UniversalClient) (any, error) {
	res, err := c.Do(ctx, sc.argv...).Result()
	if noScript(err) {
		res, err = c.Do(ctx, sc.evalArgv()...).Result()
	}
	return res, err
}

// noScript reports a NOSCRIPT error reply (rediserr.go).
func noScript(err error) bool {
	c, ok := replyClass(err)
	return ok && c == rediserr.NoScript
}
