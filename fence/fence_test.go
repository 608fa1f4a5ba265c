package fence_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/fence"
	"github.com/redlease/redlease/internal/clusterkey"
)

func TestStaleTokenError(t *testing.T) {
	err := error(&fence.StaleTokenError{Resource: "orders", Token: 7, Highest: 9})
	assert.ErrorIs(t, err, fence.ErrStaleToken)
	assert.NotErrorIs(t, err, fence.ErrInvalidToken)
	assert.Equal(t, `fence: stale token 7 for resource "orders": it has accepted token 9`, err.Error())
	wrapped := errors.Join(errors.New("write failed"), err)
	stale, ok := errors.AsType[*fence.StaleTokenError](wrapped)
	require.True(t, ok)
	assert.Equal(t, uint64(9), stale.Highest)
}

func TestTokenContext(t *testing.T) {
	_, ok := fence.TokenFrom(context.Background())
	assert.False(t, ok, "no token")
	_, ok = fence.TokenFrom(fence.WithToken(context.Background(), 0))
	assert.False(t, ok, "a zero token is not stored")
	ctx, cancel := context.WithCancel(fence.WithToken(context.Background(), 42))
	cancel()
	got, ok := fence.TokenFrom(ctx)
	assert.True(t, ok)
	assert.Equal(t, uint64(42), got, "readable after the context ended")
}

func TestTokenFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		set         bool
		want        uint64
		errPart     string
	}{
		{name: "unset", errPart: "REDLEASE_TOKEN is not set"},
		{name: "valid", value: "18446744073709551615", set: true, want: 18446744073709551615},
		{name: "zero", value: "0", set: true, errPart: `REDLEASE_TOKEN="0"`},
		{name: "empty", value: "", set: true, errPart: `REDLEASE_TOKEN=""`},
		{name: "not a number", value: "12a", set: true, errPart: `REDLEASE_TOKEN="12a"`},
		{name: "negative", value: "-3", set: true, errPart: `REDLEASE_TOKEN="-3"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(fence.EnvToken, tc.value)
			if !tc.set {
				require.NoError(t, os.Unsetenv(fence.EnvToken))
			}
			got, err := fence.TokenFromEnv()
			if tc.errPart != "" {
				require.ErrorIs(t, err, fence.ErrInvalidToken)
				assert.ErrorContains(t, err, tc.errPart)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestTokenKey(t *testing.T) {
	for _, tc := range []struct {
		key, want, errPart string
	}{
		{key: "cart", want: "{cart}:fence-token"},
		{key: "{user1}.cart", want: "{user1}.cart:fence-token"},
		{key: "orders:{eu}:42", want: "orders:{eu}:42:fence-token"},
		{key: "a{b}}c", want: "a{b}}c:fence-token"},
		{key: "", errPart: "empty key"},
		{key: "a{}b", errPart: `key "a{}b" has braces but no hash tag`},
		{key: "a}b", errPart: `key "a}b" has braces`},
		{key: "a{b", errPart: `key "a{b" has braces`},
	} {
		t.Run(tc.key, func(t *testing.T) {
			got, err := fence.TokenKey(tc.key)
			if tc.errPart != "" {
				require.ErrorIs(t, err, fence.ErrInvalidResource)
				assert.ErrorContains(t, err, tc.errPart)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, clusterkey.Slot(tc.key), clusterkey.Slot(got), "the token key must be in the resource key's slot")
		})
	}
}
