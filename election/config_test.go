package election

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redlease/redlease/internal/testing/testnodes"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"negative retry delay", Config{Lease: lease.Config{RetryDelay: -time.Millisecond}}, "RetryDelay (-1ms) must not be negative"},
		{"negative resign delay", Config{ResignDelay: -time.Second}, "ResignDelay (-1s) must not be negative"},
		{"negative stop timeout", Config{StopTimeout: -time.Second}, "StopTimeout (-1s) must not be negative"},
		{"negative event buffer", Config{EventBuffer: -1}, "EventBuffer (-1) must not be negative"},
		{"negative handover window", Config{HandoverWindow: -time.Second}, "HandoverWindow (-1s) must not be negative"},
		{"negative yield after", Config{YieldAfter: -time.Second}, "YieldAfter (-1s) must not be negative"},
		{"a semaphore", Config{Lease: lease.Config{Permits: 3}}, "Lease.Permits (3): an election has one leader"},
		{"no place to lead", Config{Leaderships: make(chan struct{})}, "Leaderships has capacity 0"},
		{"negative ttl", Config{Lease: lease.Config{TTL: -time.Second}}, "TTL (-1s) must not be negative"},
		{"ttl not in ms", Config{Lease: lease.Config{TTL: 1500 * time.Microsecond}}, "TTL (1.5ms) must be a whole number of milliseconds"},
		{"renew interval above ttl", Config{Lease: lease.Config{TTL: time.Second, RenewInterval: 2 * time.Second}}, "RenewInterval (2s) must be below TTL (1s)"},
		{"retry interval above renew interval", Config{Lease: lease.Config{RenewInterval: time.Second, RetryInterval: 2 * time.Second}}, "RetryInterval (2s) must not exceed RenewInterval (1s)"},
		{"safety margin too big", Config{Lease: lease.Config{TTL: time.Second, SafetyMargin: 900 * time.Millisecond}}, "SafetyMargin (900ms)"},
		{"metadata too big", Config{Lease: lease.Config{Metadata: map[string]string{"x": strings.Repeat("a", 4096)}}}, "above the limit of 4096"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(&redlock.Client{}, "key", tc.cfg)
			require.ErrorIs(t, err, redlock.ErrInvalidArgument, "New validates")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	require.NoError(t, Config{}.validate())

}

// The defaults: the lease's, filled in by package lease (New resolves
// them), then the elector's own, derived from them.
func TestConfigDefaults(t *testing.T) {
	_, nodes := testnodes.Minis(t, 3)
	e, err := New(newClient(t, redlock.Config{}, nodes), "key", Config{})
	require.NoError(t, err)
	d := e.cfg
	assert.Equal(t, 10*time.Second, d.Lease.TTL)
	assert.Equal(t, d.Lease.TTL/3, d.Lease.RenewInterval)
	assert.Equal(t, d.Lease.RenewInterval/4, d.Lease.RetryInterval)
	assert.Equal(t, d.Lease.TTL/20, d.Lease.SafetyMargin)
	assert.Equal(t, 100*time.Millisecond, d.Lease.RetryDelay)
	assert.Equal(t, 2*d.Lease.RetryDelay, d.ResignDelay)
	assert.Equal(t, d.Lease.TTL, d.StopTimeout)
	assert.Equal(t, 64, d.EventBuffer)
	assert.Equal(t, 4*d.Lease.RetryDelay, d.HandoverWindow)
	assert.Zero(t, d.YieldAfter, "never yield")
	assert.NotEmpty(t, d.Lease.ID)
	assert.NotNil(t, d.Lease.Logger)

	e, err = New(newClient(t, redlock.Config{}, nodes), "key", Config{Lease: lease.Config{TTL: 2 * time.Second, RetryDelay: 30 * time.Millisecond}})
	require.NoError(t, err)
	assert.Equal(t, 60*time.Millisecond, e.cfg.ResignDelay, "2 x the lease's RetryDelay")
	assert.Equal(t, 2*time.Second, e.cfg.StopTimeout, "the lease's TTL")
}

func TestNewChecksClient(t *testing.T) {
	_, nodes := testnodes.Minis(t, 3)
	c := newClient(t, redlock.Config{NodeTimeout: 100 * time.Millisecond, MaxTTL: 20 * time.Second}, nodes)
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"ttl above max ttl", Config{Lease: lease.Config{TTL: 25 * time.Second}}, "TTL (25s) is above MaxTTL (20s)"},
		{"ttl too short for node timeout", Config{Lease: lease.Config{TTL: 200 * time.Millisecond}}, "TTL (200ms) must exceed NodeTimeout*2 + drift (204ms)"},
		{"no room for a refresh", Config{Lease: lease.Config{TTL: time.Second, RenewInterval: 900 * time.Millisecond, SafetyMargin: 90 * time.Millisecond}},
			"RenewInterval + SafetyMargin (900ms + 90ms) must be below TTL - drift (1s - 12ms)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(c, "key", tc.cfg)
			require.ErrorIs(t, err, redlock.ErrInvalidArgument)
			assert.Contains(t, err.Error(), tc.want)
		})
	}

	_, err := New(nil, "key", Config{})
	require.ErrorIs(t, err, redlock.ErrInvalidArgument)
	_, err = New(c, "", Config{})
	require.ErrorIs(t, err, redlock.ErrInvalidArgument)

	e, err := New(c, "key", Config{Lease: lease.Config{ID: "me", Metadata: map[string]string{"a": "b"}}})
	require.NoError(t, err)
	assert.Equal(t, "me", e.cfg.Lease.ID)
	assert.False(t, e.IsLeader())
	assert.NoError(t, e.Resign(context.Background()), "nothing to resign")
	assert.NoError(t, e.Healthy(0), "a standby is healthy")
}
