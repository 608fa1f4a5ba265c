package redlock

import (
	_ "embed"
	"strconv"

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

	scriptAcquire = redis.NewScript(luaQuarantine + luaAcquire)
	scriptFence   = redis.NewScript(luaFence)
	scriptExtend  = redis.NewScript(luaExtend)
	scriptRelease = redis.NewScript(luaRelease)
	scriptMany    = redis.NewScript(luaExtendMany)
	scriptProbe   = redis.NewScript(luaQuarantine + luaProbe)
	scriptRaise   = redis.NewScript(luaRaise)
	scriptInspect = redis.NewScript(luaQuarantine + luaInspect)
)

// scriptSource is each script's text, for SCRIPT LOAD.
var scriptSource = map[*redis.Script]string{
	scriptAcquire: luaQuarantine + luaAcquire, scriptFence: luaFence, scriptExtend: luaExtend,
	scriptMany:    luaExtendMany,
	scriptRelease: luaRelease, scriptProbe: luaQuarantine + luaProbe, scriptRaise: luaRaise,
	scriptInspect: luaQuarantine + luaInspect,
}

// scriptNames and scriptCommands describe the scripts in errors (a refusal
// by an ACL names what the user needs; see the README's Security section).
var (
	scriptNames = map[*redis.Script]string{
		scriptAcquire: "acquire", scriptFence: "fence", scriptExtend: "extend", scriptMany: "extend_many", scriptRelease: "release",
		scriptProbe: "probe", scriptRaise: "raise", scriptInspect: "inspect",
	}
	quarantineCommands = "TIME, INFO, HMGET, HGET, HSET"
	scriptCommands     = map[*redis.Script]string{
		scriptAcquire: "GET, SET, PEXPIRE, PTTL, " + quarantineCommands,
		scriptFence:   "GET, SET, HGET, HSET",
		scriptExtend:  "GET, PEXPIRE, HGET",
		scriptMany:    "GET, PEXPIRE, HGET",
		scriptRelease: "GET, DEL, PUBLISH or SPUBLISH",
		scriptProbe:   "EXISTS, " + quarantineCommands,
		scriptRaise:   "HMGET, HSET",
		scriptInspect: "GET, PTTL, " + quarantineCommands,
	}
)

// counterTTL is the fencing counters' TTL in ms, as the scripts take it
// ("0": fencing off).
func (c *Client) counterTTL() any { return c.args.counterTTL }

// maxTTLArg is MaxTTL in ms, as the scripts take it.
func (c *Client) maxTTLArg() any { return c.args.maxTTL }

// scriptArgs are the script arguments that are the same for every call of
// a Client, boxed once (an argument boxed per call is an allocation).
type scriptArgs struct {
	counterTTL, maxTTL, mode, fromZero any
	// layout is a cluster's layout as its markers record it (Layout);
	// "" where there is none to check (independent nodes).
	layout any
}

func (c *Client) initArgs() {
	c.args = scriptArgs{counterTTL: c.counterTTLString(), maxTTL: strconv.FormatInt(c.cfg.MaxTTL.Milliseconds(), 10),
		mode: c.quarantineModeString(), fromZero: flag(c.cfg.unsafeOff.CounterFromZero), layout: ""}
}

// quarantineMode is the scripts' quarantine argument, boxed once.
func (c *Client) quarantineMode() any { return c.args.mode }

func (c *Client) counterTTLString() string {
	switch {
	case c.cfg.DisableFencing:
		return "0"
	case c.cfg.unsafeOff.CounterTTL > 0:
		return strconv.FormatInt(c.cfg.unsafeOff.CounterTTL.Milliseconds(), 10)
	}
	return strconv.FormatInt(CounterTTLFactor*c.cfg.MaxTTL.Milliseconds(), 10)
}

// quarantineMode is the scripts' quarantine argument (lua/quarantine.lua):
// "0" off, "1" on, "2" on without the replication-ID check (a control).
func (c *Client) quarantineModeString() string {
	switch {
	case c.cfg.DisableQuarantine:
		return "0"
	case c.cfg.unsafeOff.ReplicationIDCheck:
		return "2"
	}
	return "1"
}
