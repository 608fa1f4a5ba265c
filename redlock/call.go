package redlock

import (
	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/scripts"
)

// scriptCall is one script call's whole command line (internal/scripts),
// built once and shared by every node whose keys are the same.
type scriptCall = scripts.Call

// newCall is the call of script s on keys with args.
func newCall(s *redis.Script, keys []string, args ...any) *scriptCall {
	return scripts.NewCall(s, keys, args...)
}
