package lease

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/redlock"
)

func TestConfigDefaults(t *testing.T) {
	c := Config{}.withDefaults()
	assert.Equal(t, 10*time.Second, c.TTL)
	assert.Equal(t, c.TTL/3, c.RenewInterval)
	assert.Equal(t, c.RenewInterval/4, c.RetryInterval)
	assert.Equal(t, c.TTL/20, c.SafetyMargin)
	assert.Equal(t, 100*time.Millisecond, c.RetryDelay)
	assert.NotEmpty(t, c.ID)
	assert.NotNil(t, c.Logger)
	require.NoError(t, c.validate())
	require.NoError(t, Config{}.validate(), "the zero Config is valid")

	// Derived defaults follow the fields they derive from.
	c = Config{TTL: 3 * time.Second, RenewInterval: 2 * time.Second}.withDefaults()
	assert.Equal(t, 500*time.Millisecond, c.RetryInterval)
	assert.Equal(t, 150*time.Millisecond, c.SafetyMargin)
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // a part of the error that names the bad values
	}{
		{"negative TTL", Config{TTL: -time.Second}, "TTL (-1s) must not be negative"},
		{"TTL not whole ms", Config{TTL: 1500 * time.Microsecond}, "TTL (1.5ms) must be a whole number of milliseconds"},
		{"negative RenewInterval", Config{RenewInterval: -1}, "RenewInterval (-1ns) must not be negative"},
		{"negative RetryInterval", Config{RetryInterval: -time.Millisecond}, "RetryInterval (-1ms) must not be negative"},
		{"negative SafetyMargin", Config{SafetyMargin: -time.Second}, "SafetyMargin (-1s) must not be negative"},
		{"negative RetryDelay", Config{RetryDelay: -time.Second}, "RetryDelay (-1s) must not be negative"},
		{"RenewInterval = TTL", Config{TTL: 5 * time.Second, RenewInterval: 5 * time.Second}, "RenewInterval (5s) must be below TTL (5s)"},
		{"RenewInterval > TTL", Config{RenewInterval: 11 * time.Second}, "RenewInterval (11s) must be below TTL (10s)"},
		{"RetryInterval > RenewInterval", Config{RenewInterval: time.Second, RetryInterval: 2 * time.Second},
			"RetryInterval (2s) must not exceed RenewInterval (1s)"},
		{"RetryInterval rounds to 0", Config{RenewInterval: 3}, "RetryInterval (0s) must be positive"},
		{"no room for a refresh", Config{TTL: 10 * time.Second, RenewInterval: 8 * time.Second, SafetyMargin: 2 * time.Second},
			"SafetyMargin (2s) must be below TTL - RenewInterval (10s - 8s = 2s)"},
		{"default margin too big for RenewInterval", Config{RenewInterval: 9600 * time.Millisecond},
			"SafetyMargin (500ms) must be below TTL - RenewInterval"},
		{"holder too large", Config{ID: strings.Repeat("x", 4096)}, "ID and Metadata encode to 4099 bytes, above the limit of 4096"},
		{"metadata too large", Config{ID: "a", Metadata: map[string]string{"blob": strings.Repeat("é", 1000)}},
			"ID and Metadata encode to 6012 bytes, above the limit of 4096"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.validate()
			require.ErrorIs(t, err, redlock.ErrInvalidArgument)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestValidateForClient(t *testing.T) {
	_, nodes := memNodes(t, 3)
	c := newClient(t, redlock.Config{NodeTimeout: 100 * time.Millisecond, MaxTTL: 20 * time.Second}, nodes)
	require.NoError(t, Config{}.validateFor(c))
	err := Config{TTL: 30 * time.Second}.validateFor(c)
	require.ErrorIs(t, err, redlock.ErrInvalidArgument)
	require.ErrorIs(t, err, redlock.ErrInvalidArgument, "redlock's own TTL rule, called")
	assert.EqualError(t, err, "redlock: invalid argument: lease.Config: TTL does not suit the client: TTL (30s) is above MaxTTL (20s)")
	err = Config{TTL: 204 * time.Millisecond}.validateFor(c)
	require.ErrorIs(t, err, redlock.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "TTL (204ms) must exceed NodeTimeout*2 + drift (204.04ms)")
	err = Config{TTL: -time.Second}.validateFor(c)
	require.ErrorIs(t, err, redlock.ErrInvalidArgument, "Validate's own checks come first")
	assert.Contains(t, err.Error(), "TTL (-1s)")
	require.ErrorIs(t, Config{}.validateFor(nil), redlock.ErrInvalidArgument)
}
