// Package scripts holds redlock's Lua scripts (one per file under lua/,
// each opened by its contract: KEYS, ARGV, reply), what each needs of a
// server's ACL, and [Call], one script call's command line. Building a
// call's arguments and reading its reply are redlock's: they depend on its
// nodes and answers. It imports nothing of redlock.
package scripts

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The scripts' sources. The quarantine prelude is prepended to those that
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
	//go:embed lua/extend_many.lua
	luaExtendMany string
	//go:embed lua/release.lua
	luaRelease string
	//go:embed lua/probe.lua
	luaProbe string
	//go:embed lua/raise.lua
	luaRaise string
	//go:embed lua/inspect.lua
	luaInspect string
	//go:embed lua/settle.lua
	luaSettle string
	//go:embed lua/restore_many.lua
	luaRestoreMany string
)

// The scripts (docs/design.md §4.2-§4.9 say what each does).
var (
	Acquire     = redis.NewScript(luaQuarantine + luaAcquire) // an attempt's grant
	Fence       = redis.NewScript(luaFence)                   // the fencing write-back
	Extend      = redis.NewScript(luaExtend)                  // one lock's extension
	ExtendMany  = redis.NewScript(luaExtendMany)              // a batch's extension
	Release     = redis.NewScript(luaRelease)                 // a release, and its notice
	Probe       = redis.NewScript(luaQuarantine + luaProbe)   // a node's marker, its quarantine started
	Raise       = redis.NewScript(luaRaise)                   // a forgetful node's floor raised
	Inspect     = redis.NewScript(luaQuarantine + luaInspect) // a majority read's request
	Settle      = redis.NewScript(luaSettle)                  // a late grant's counter lowered
	RestoreMany = redis.NewScript(luaRestoreMany)             // lost copies put back
)

// All is every script, in the order of the Function library's text (its
// version hashes that text: the order is part of it).
var All = []*redis.Script{Acquire, Fence, Extend, ExtendMany, Release, Probe, Raise, Inspect, Settle, RestoreMany}

// about describes one script.
type about struct {
	source   string // its text, for SCRIPT LOAD and EVAL
	name     string // its name in errors and logs
	commands string // the commands it runs, for a refusal by an ACL
}

// quarantineCommands are the commands of the quarantine prelude.
const quarantineCommands = "TIME, INFO, HMGET, HGET, HSET, DEL"

// catalogue describes every script; it is never changed.
var catalogue = map[*redis.Script]about{
	Acquire:     {luaQuarantine + luaAcquire, "acquire", "SET, PTTL, PEXPIRE, GET, INCR, DEL, " + quarantineCommands},
	Fence:       {luaFence, "fence", "GET, SET, HGET, HSET"},
	Extend:      {luaExtend, "extend", "GET, PEXPIRE, HGET"},
	ExtendMany:  {luaExtendMany, "extend_many", "MGET, TIME, PEXPIREAT, PEXPIRE, HGET"},
	Release:     {luaRelease, "release", "GET, DEL, PUBLISH or SPUBLISH"},
	Probe:       {luaQuarantine + luaProbe, "probe", "EXISTS, " + quarantineCommands},
	Raise:       {luaRaise, "raise", "HMGET, HSET"},
	Inspect:     {luaQuarantine + luaInspect, "inspect", "GET, PTTL, " + quarantineCommands},
	Settle:      {luaSettle, "settle", "GET, SET"},
	RestoreMany: {luaRestoreMany, "restore_many", "HMGET, GET, SET, HSET"},
}

// Source is s's text, for SCRIPT LOAD and EVAL ("" for a script not of
// this package).
func Source(s *redis.Script) string { return catalogue[s].source }

// Name names s in errors and logs ("acquire", "extend_many", ...).
func Name(s *redis.Script) string { return catalogue[s].name }

// Commands lists the commands s runs, for an error that an ACL refused
// one (the README's Security section lists what redlease needs).
func Commands(s *redis.Script) string { return catalogue[s].commands }
