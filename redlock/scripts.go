package redlock

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The scripts, one per file under lua/, each opened by its contract
// (KEYS, ARGV, reply). The quarantine prelude is prepended to those that
// check a node's marker.
var (
	//go:embed lua/quarantine.lua
	luaQuarantine string
	//go:embed lua/acquire.lua
	luaAcquire string
	//go:embed lua/fence.lua
	luaFence string
	//go:embed lua/extend.lua
	luaExtend string
	//go:embed lua/release.lua
	luaRelease string
	//go:embed lua/probe.lua
	luaProbe string
	//go:embed lua/raise.lua
	luaRaise string
	//go:embed lua/inspect.lua
	luaInspect string

	scriptAcquire = redis.NewScript(luaQuarantine + luaAcquire)
	scriptFence   = redis.NewScript(luaFence)
	scriptExtend  = redis.NewScript(luaQuarantine + luaExtend)
	scriptRelease = redis.NewScript(luaRelease)
	scriptProbe   = redis.NewScript(luaQuarantine + luaProbe)
	scriptRaise   = redis.NewScript(luaRaise)
	scriptInspect = redis.NewScript(luaQuarantine + luaInspect)
)
