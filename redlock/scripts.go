package redlock

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/scripts"
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
// "0" off, "1" on; for a negative control, "2" on without the
// replication-ID check, "3" without the incarnation token's, "4" without
// either.
func quarantineArg(cfg *Config) string {
	noRepl, noToken := cfg.unsafeOff.replicationIDCheck(), cfg.unsafeOff.incarnationToken()
	switch {
	case cfg.DisableQuarantine:
		return "0"
	case noRepl && noToken:
		return "4"
	case noRepl:
		return "2"
	case noToken:
		return "3"
	}
	return "1"
}

// scriptSet is a set of scripts to load on a server at once.
type scriptSet []*redis.Script

// preloaded are the scripts New loads on every node after its probe, so
// that the first acquisition does not pay a NOSCRIPT round trip (probe.lua
// too: on a node in FCALL mode it ran as a function, and the EVAL scripts
// are what a node falls back to).
var preloaded = scriptSet{scripts.Acquire, scripts.Fence, scripts.Extend, scripts.ExtendMany, scripts.Release, scripts.Raise, scripts.Inspect, scripts.Settle, scripts.RestoreMany, scripts.Probe}

// load loads the set on c with SCRIPT LOAD (not Script.Load: the latter
// takes the server's reply as the digest, and one odd node would change it
// for every client), in order; odd is told of every script whose digest
// the server gives differently (it will run by EVAL there). It stops at
// the first error, classified and naming the script.
func (set scriptSet) load(ctx context.Context, c redis.UniversalClient, odd func(*redis.Script)) error {
	for _, s := range set {
		sha, err := c.ScriptLoad(ctx, scripts.Source(s)).Result()
		if err != nil {
			return annotate(scripts.NewCall(s, nil), classify(err))
		}
		if sha != s.Hash() {
			odd(s)
		}
	}
	return nil
}
