package election

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Run's error when its context was cancelled with a cause is one line
// (#32: errors.Join printed "context canceled\nterminated signal
// received"), and errors.Is finds the context's error and the cause.
func TestStoppedErrorOneLine(t *testing.T) {
	cause := errors.New("terminated signal received")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	err := stopped(ctx)
	assert.Equal(t, "election: stopped: context canceled: terminated signal received", err.Error())
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, cause)
}
