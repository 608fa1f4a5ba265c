package fencetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/fence"
)

func TestCheckRising(t *testing.T) {
	for _, tc := range []struct {
		name     string
		log      []string
		accepted int
		errPart  string
	}{
		{"rising", []string{"1", "2", "2", "3", "3"}, 5, ""},
		{"went down", []string{"2", "1", "3", "3"}, 4, "entry 1"},
		{"lost update", []string{"1", "3", "3"}, 4, "updates lost"},
		{"highest missing", []string{"1", "2", "3"}, 3, "not all accepted"},
		{"not a token", []string{"x", "3", "3"}, 3, "entry 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckRising(tc.log, tc.accepted, 3, 2)
			if tc.errPart == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.errPart)
		})
	}
}

func TestWrite(t *testing.T) {
	tokens := Interleaved(4, 3)
	sorted := slices.Sorted(slices.Values(tokens))
	assert.Equal(t, []uint64{1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4}, sorted)
	n, err := Write(tokens, 3, func(tok uint64) error {
		if tok == 1 {
			return &fence.StaleTokenError{Resource: "r", Token: 1, Highest: 2}
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 9, n)
	_, err = Write(tokens, 3, func(uint64) error { return errors.New("broken") })
	assert.ErrorContains(t, err, "broken")
	assert.Len(t, Unguarded(tokens), 12)
}
