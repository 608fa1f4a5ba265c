package fence

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed lua/check.lua
	checkLua string
	//go:embed lua/set.lua
	setLua string
	//go:embed lua/del.lua
	delLua string
	//go:embed lua/hset.lua
	hsetLua string

	setScript  = NewScript(setLua)
	delScript  = NewScript(delLua)
	hsetScript = NewScript(hsetLua)
)

// The go-redis clients a Redis guard accepts: any [redis.Scripter].
var (
	_ redis.Scripter = (*redis.Client)(nil)
	_ redis.Scripter = (*redis.ClusterClient)(nil)
	_ redis.Scripter = (*redis.Ring)(nil)
)

// Redis is the guard of resources that are Redis keys: each write is one
// script call that checks the token against the highest the key has
// accepted (kept in its token key, [TokenKey]), refuses it with a
// [*StaleTokenError] when it is lower, and otherwise raises the highest
// and makes the write. It works on a standalone server and on a Redis
// Cluster (the token key is in the resource key's slot).
//
// A token key never expires: deleting it would let a stale token write
// again. A write that fails inside the script (a wrong type) may leave
// the token raised without the write; that only refuses more.
//
// A Redis is safe for concurrent use.
type Redis struct {
	c redis.Scripter
}

// NewRedis returns the guard of keys on c (a *redis.Client,
// *redis.ClusterClient, or any [redis.Scripter]).
func NewRedis(c redis.Scripter) *Redis { return &Redis{c: c} }

// Set sets key to value (with a TTL when ttl > 0) if token is not below
// the highest token key has accepted.
func (g *Redis) Set(ctx context.Context, key string, token uint64, value string, ttl time.Duration) error {
	if ttl < 0 || (ttl > 0 && ttl < time.Millisecond) {
		return fmt.Errorf("fence: Set %q: ttl %s must be 0 (none) or at least 1ms", key, ttl)
	}
	return g.Run(ctx, setScript, key, token, nil, value, ttl.Milliseconds()).Err()
}

// Del deletes key if token is not below the highest it has accepted,
// and reports whether it existed. The token key stays.
func (g *Redis) Del(ctx context.Context, key string, token uint64) (bool, error) {
	n, err := g.Run(ctx, delScript, key, token, nil).Int64()
	return n == 1, err
}

// HSet sets fields of the hash key (field, value, field, value, ...) if
// token is not below the highest it has accepted, and returns the number
// of fields added.
func (g *Redis) HSet(ctx context.Context, key string, token uint64, fieldValues ...string) (int64, error) {
	if len(fieldValues) == 0 || len(fieldValues)%2 != 0 {
		return 0, fmt.Errorf("fence: HSet %q: %d arguments, want field, value pairs", key, len(fieldValues))
	}
	args := make([]any, len(fieldValues))
	for i, v := range fieldValues {
		args[i] = v
	}
	return g.Run(ctx, hsetScript, key, token, nil, args...).Int64()
}

// Run runs s (see [NewScript]) behind the check of key: its body sees
// KEYS = key followed by keys, and ARGV = args. On a cluster, keys must
// hash to key's slot. The reply is the body's, or the error
// [*StaleTokenError] (nothing written) when token is below the highest;
// bad input gives an error that names it.
func (g *Redis) Run(ctx context.Context, s *Script, key string, token uint64, keys []string, args ...any) *redis.Cmd {
	cmd := redis.NewCmd(ctx)
	if err := validate(key, token); err != nil {
		cmd.SetErr(err)
		return cmd
	}
	tk, err := TokenKey(key)
	if err != nil {
		cmd.SetErr(err)
		return cmd
	}
	ks := append(append([]string{key}, keys...), tk)
	as := append(args[:len(args):len(args)], strconv.FormatUint(token, 10))
	cmd = s.s.Run(ctx, g.c, ks, as...)
	if h, ok := staleReply(cmd.Err()); ok {
		cmd.SetErr(&StaleTokenError{Resource: key, Token: token, Highest: h})
	}
	return cmd
}

// staleReply recognizes check.lua's refusal and returns the highest
// token it names.
func staleReply(err error) (uint64, bool) {
	var re redis.Error
	if !errors.As(err, &re) {
		return 0, false
	}
	rest, ok := strings.CutPrefix(re.Error(), "FENCESTALE ")
	if !ok {
		return 0, false
	}
	h, perr := strconv.ParseUint(rest, 10, 64)
	return h, perr == nil
}

// Script is a user's Lua script that runs behind the fence check, in the
// same script call (atomically): see [NewScript] and [Redis.Run]. A
// Script is safe for concurrent use.
type Script struct {
	s *redis.Script
}

// NewScript returns body as a script that [Redis.Run] runs only when the
// token is not below the resource's highest. body is ordinary Redis Lua:
// KEYS[1] is the resource key, then the caller's keys; ARGV the caller's
// args; its reply is the call's. It must not use the global names
// fence_key, fence_token and fence_highest.
func NewScript(body string) *Script {
	return &Script{s: redis.NewScript(checkLua + "\n" + body)}
}

// tokenKeySuffix follows the resource key's hash tag in its token key.
const tokenKeySuffix = ":fence-token"

// TokenKey is the key where the Redis guard keeps the highest token key
// has accepted, in key's hash slot: key + ":fence-token" when key has a
// hash tag ("{user1}.cart" -> "{user1}.cart:fence-token"), else the key
// as the tag ("cart" -> "{cart}:fence-token"). A key with braces but no
// hash tag ("a{}b", "a}b") is refused: no other key is surely in its slot.
func TokenKey(key string) (string, error) {
	if key == "" {
		return "", fmt.Errorf("%w: empty key", ErrInvalidResource)
	}
	if hasHashTag(key) {
		return key + tokenKeySuffix, nil
	}
	if strings.ContainsAny(key, "{}") {
		return "", fmt.Errorf("%w: key %q has braces but no hash tag, so its token key cannot share its cluster slot; "+
			"give it a tag such as {name}", ErrInvalidResource, key)
	}
	return "{" + key + "}" + tokenKeySuffix, nil
}

// hasHashTag reports whether Redis Cluster hashes only part of key: a
// non-empty run between the first '{' and the next '}'.
func hasHashTag(key string) bool {
	i := strings.IndexByte(key, '{')
	if i < 0 {
		return false
	}
	j := strings.IndexByte(key[i+1:], '}')
	return j > 0
}
