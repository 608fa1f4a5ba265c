package redlock

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/scripts"
	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/internal/unsafeopt"
)

// The script set (scripts.go) on its own: the constant arguments a
// configuration gives the scripts, and loading the scripts on a server.

func TestScriptArgs(t *testing.T) {
	withOff := func(cfg Config, off unsafeopt.Off) Config {
		turnOff(t, &cfg, off)
		return cfg
	}
	for _, tc := range []struct {
		name                           string
		cfg                            Config
		counterTTL, maxTTL, mode, zero string
	}{
		{"defaults", Config{}, "", "", "1", "0"},
		{"max TTL", Config{MaxTTL: 2 * time.Minute}, "", "120000", "1", "0"},
		{"fencing off", Config{DisableFencing: true}, "0", "", "1", "0"},
		{"quarantine off", Config{DisableQuarantine: true}, "", "", "0", "0"},
		{"control: no replication-ID check", withOff(Config{}, unsafeopt.Off{ReplicationIDCheck: true}), "", "", "2", "0"},
		{"control: no incarnation token check", withOff(Config{}, unsafeopt.Off{IncarnationToken: true}), "", "", "3", "0"},
		{"control: neither", withOff(Config{}, unsafeopt.Off{ReplicationIDCheck: true, IncarnationToken: true}), "", "", "4", "0"},
		{"control: counters from zero", withOff(Config{}, unsafeopt.Off{CounterFromZero: true}), "", "", "1", "1"},
		{"control: short counter TTL", withOff(Config{}, unsafeopt.Off{CounterTTL: 1500 * time.Millisecond}), "1500", "", "1", "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg.withDefaults()
			maxTTL := strconv.FormatInt(cfg.MaxTTL.Milliseconds(), 10)
			if tc.maxTTL != "" {
				maxTTL = tc.maxTTL
			}
			counterTTL := strconv.FormatInt(CounterTTLFactor*cfg.MaxTTL.Milliseconds(), 10)
			if tc.counterTTL != "" {
				counterTTL = tc.counterTTL
			}
			// An extend sets the counter's TTL again once a quarter of it
			// has passed (0: fencing off, never).
			ms, err := strconv.ParseInt(counterTTL, 10, 64)
			require.NoError(t, err)
			fenceEvery := time.Duration(ms) * time.Millisecond / 4
			got := newScriptArgs(&cfg)
			assert.Equal(t, scriptArgs{counterTTL: counterTTL, fenceEvery: fenceEvery, maxTTL: maxTTL, mode: tc.mode, fromZero: tc.zero, layout: ""}, got)
			assert.Equal(t, counterTTL, counterTTLArg(&cfg))
		})
	}
}

func TestScriptSetLoad(t *testing.T) {
	_, cs := testnodes.Minis(t, 1)
	ctx := context.Background()
	require.NoError(t, preloaded.load(ctx, cs[0], func(s *redis.Script) { t.Errorf("odd digest for %s", scripts.Name(s)) }))
	for _, s := range preloaded {
		ok, err := s.Exists(ctx, cs[0]).Result()
		require.NoError(t, err)
		assert.Equal(t, []bool{true}, ok, "%s is loaded", scripts.Name(s))
	}
	assert.Contains(t, preloaded, scripts.Probe, "probe.lua too: in FCALL mode it ran as a function")
}

// TestScriptSetOddDigest: a server that names a script by another digest
// is reported once per script, in order, and the load goes on.
func TestScriptSetOddDigest(t *testing.T) {
	addr := fakeServer(t, "$40\r\n"+strings.Repeat("f", 40)+"\r\n")
	rc := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { _ = rc.Close() })
	var odd []string
	require.NoError(t, preloaded.load(context.Background(), rc, func(s *redis.Script) { odd = append(odd, scripts.Name(s)) }))
	assert.Equal(t, []string{"acquire", "fence", "extend", "extend_many", "release", "raise", "inspect", "settle", "restore_many", "probe"}, odd)
}

// TestScriptSetRefused: a refusal stops the load with an error naming the
// script and what it needs.
func TestScriptSetRefused(t *testing.T) {
	addr := fakeServer(t, "-NOPERM User u has no permissions to run the 'script|load' command\r\n")
	rc := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { _ = rc.Close() })
	err := preloaded.load(context.Background(), rc, func(*redis.Script) {})
	require.Error(t, err)
	assert.True(t, accessDenied(err))
	assert.Contains(t, err.Error(), "acquire script")
	assert.Contains(t, err.Error(), "(commands "+scripts.Commands(scripts.Acquire)+")")
}
