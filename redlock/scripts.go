package redlock

import (
	"context"
	_ "embed"
	"strconv"
	"time"

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
	//go:embed lua/settle.lua
	luaSettle string

	scriptAcquire = redis.NewScript(luaQuarantine + luaAcquire)
	scriptFence   = redis.NewScript(luaFence)
	scriptExtend  = redis.NewScript(luaExtend)
	scriptRelease = redis.NewScript(luaRelease)
	scriptMany    = redis.NewScript(luaExtendMany)
	scriptProbe   = redis.NewScript(luaQuarantine + luaProbe)
	scriptRaise   = redis.NewScript(luaRaise)
	scriptInspect = redis.NewScript(luaQuarantine + luaInspect)
	scriptSettle  = redis.NewScript(luaSettle)
)

// scriptSource is each script's text, for SCRIPT LOAD.
var scriptSource = map[*redis.Script]string{
	scriptAcquire: luaQuarantine + luaAcquire, scriptFence: luaFence, scriptExtend: luaExtend,
	scriptMany:    luaExtendMany,
	scriptRelease: luaRelease, scriptProbe: luaQuarantine + luaProbe, scriptRaise: luaRaise,
	scriptInspect: luaQuarantine + luaInspect, scriptSettle: luaSettle,
}

// scriptNames and scriptCommands describe the scripts in errors (a refusal
// by an ACL names what the user needs; see the README's Security section).
var (
	scriptNames = map[*redis.Script]string{
		scriptAcquire: "acquire", scriptFence: "fence", scriptExtend: "extend", scriptMany: "extend_many", scriptRelease: "release",
		scriptProbe: "probe", scriptRaise: "raise", scriptInspect: "inspect", scriptSettle: "settle",
	}
	quarantineCommands = "TIME, INFO, HMGET, HGET, HSET"
	scriptCommands     = map[*redis.Script]string{
		scriptAcquire: "SET, PTTL, PEXPIRE, GET, INCR, DEL, " + quarantineCommands,
		scriptFence:   "GET, SET, HGET, HSET",
		scriptExtend:  "GET, PEXPIRE, HGET",
		scriptMany:    "MGET, TIME, PEXPIREAT, PEXPIRE, HGET",
		scriptRelease: "GET, DEL, PUBLISH or SPUBLISH",
		scriptProbe:   "EXISTS, " + quarantineCommands,
		scriptRaise:   "HMGET, HSET",
		scriptInspect: "GET, PTTL, " + quarantineCommands,
		scriptSettle:  "GET, SET",
	}
)

// scriptArgs are the script arguments that are the same for every call of
// a Client, boxed once (an argument boxed per call is an allocation).
type scriptArgs struct {
	counterTTL any // the fencing counters' TTL in ms ("0": fencing off)
	// fenceEvery is how long ago a lock's counter TTL may have been set
	// before an extend sets it again: a quarter of the counters' TTL (0:
	// fencing off). See fenceDue.
	fenceEvery time.Duration
	maxTTL     any // MaxTTL in ms
	mode       any // the quarantine mode (see quarantineArg)
	fromZero   any // "1": a missing counter starts from 0 (a negative control)
	// layout is a cluster's layout as its markers record it (Layout);
	// "" where there is none to check (independent nodes).
	layout any
}

// newScriptArgs boxes the constant arguments of cfg (defaults filled in).
func newScriptArgs(cfg *Config) scriptArgs {
	return scriptArgs{counterTTL: counterTTLArg(cfg), fenceEvery: counterTTL(cfg) / 4,
		maxTTL: strconv.FormatInt(cfg.MaxTTL.Milliseconds(), 10),
		mode:   quarantineArg(cfg), fromZero: flag(cfg.unsafeOff.counterFromZero()), layout: ""}
}

// counterTTL is the fencing counters' TTL (0: fencing off).
func counterTTL(cfg *Config) time.Duration {
	switch {
	case cfg.DisableFencing:
		return 0
	case cfg.unsafeOff.counterTTL() > 0:
		return cfg.unsafeOff.counterTTL()
	}
	return counterTTLFactor * cfg.MaxTTL
}

// counterTTLArg is the fencing counters' TTL in ms ("0": fencing off).
func counterTTLArg(cfg *Config) string {
	return strconv.FormatInt(counterTTL(cfg).Milliseconds(), 10)
}

// quarantineArg is the scripts' quarantine argument (lua/quarantine.lua):
// "0" off, "1" on, "2" on without the replication-ID check (a control).
func quarantineArg(cfg *Config) string {
	switch {
	case cfg.DisableQuarantine:
		return "0"
	case cfg.unsafeOff.replicationIDCheck():
		return "2"
	}
	return "1"
}

// scriptSet is a set of scripts to load on a server at once.
type scriptSet []*redis.Script

// preloaded are the scripts New loads on every node after its probe, so
// that the first acquisition does not pay a NOSCRIPT round trip (probe.lua
// itself has just run).
var preloaded = scriptSet{scriptAcquire, scriptFence, scriptExtend, scriptMany, scriptRelease, scriptRaise, scriptInspect, scriptSettle}

// load loads the set on c with SCRIPT LOAD (not Script.Load: the latter
// takes the server's reply as the digest, and one odd node would change it
// for every client), in order; odd is told of every script whose digest
// the server gives differently (it will run by EVAL there). It stops at
// the first error, classified and naming the script.
func (set scriptSet) load(ctx context.Context, c redis.UniversalClient, odd func(*redis.Script)) error {
	for _, s := range set {
		sha, err := c.ScriptLoad(ctx, scriptSource[s]).Result()
		if err != nil {
			return annotate(&scriptCall{script: s}, classify(err))
		}
		if sha != s.Hash() {
			odd(s)
		}
	}
	return nil
}
