package unfenced

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/redlock"
)

// A holder that stays stale is read Rereads more times, Wait apart and
// doubling, then returned with Token 0, never with the token read.
func TestReadZeroesATokenThatNeverShows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reads, start := 0, time.Now()
		l, shown, err := Read(context.Background(), func() (redlock.Holder, error) {
			reads++
			return redlock.Holder{Value: "b", Token: 7}, nil
		}, func(redlock.Holder) bool { return true })
		require.NoError(t, err)
		assert.False(t, shown)
		assert.Equal(t, "b", l.Value)
		assert.Zero(t, l.Token, "another term's token reported for the new holder")
		assert.Equal(t, Rereads+1, reads)
		assert.Equal(t, (1<<Rereads-1)*Wait, time.Since(start))
	})
}

// A holder whose token shows is returned as read; so is an error.
func TestReadReturnsOnceTheTokenShows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reads := 0
		l, shown, err := Read(context.Background(), func() (redlock.Holder, error) {
			reads++
			return redlock.Holder{Value: "b", Token: uint64(reads)}, nil
		}, func(h redlock.Holder) bool { return h.Token < 3 })
		require.NoError(t, err)
		assert.True(t, shown)
		assert.Equal(t, uint64(3), l.Token)

		boom := errors.New("boom")
		_, shown, err = Read(context.Background(), func() (redlock.Holder, error) { return redlock.Holder{}, boom },
			func(redlock.Holder) bool { return true })
		assert.ErrorIs(t, err, boom)
		assert.True(t, shown)
	})
}

// A context that ends while Read waits to read again ends it with ErrCut.
func TestReadCutByContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		_, _, err := Read(ctx, func() (redlock.Holder, error) {
			cancel()
			return redlock.Holder{Value: "b", Token: 1}, nil
		}, func(redlock.Holder) bool { return true })
		assert.ErrorIs(t, err, ErrCut)
	})
}
