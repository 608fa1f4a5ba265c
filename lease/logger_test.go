package lease

import (
	"context"
	"testing"
	"time"

	"github.com/redlease/redlease/internal/testing/testnodes"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/redlock"
)

// A lease whose Config sets no Logger logs to its client's; one that sets
// its own logs there only (#32: one logger, set once on the client).
func TestLoggerDefaultsToClients(t *testing.T) {
	ctx := context.Background()
	_, nodes := testnodes.Minis(t, 3)
	clientLogs := &testnodes.LogBuffer{T: t}
	c := newClient(t, redlock.Config{NodeTimeout: time.Second,
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: clientLogs})}, nodes)

	l, err := TryAcquire(ctx, c, "logs", Config{})
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
	assert.Equal(t, 1, clientLogs.Count("lease keys deleted", "key=logs"), "the lease logs to the client's logger")

	ownLogs := &testnodes.LogBuffer{T: t}
	own := hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: ownLogs})
	l, err = TryAcquire(ctx, c, "own", Config{Logger: own})
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
	assert.Equal(t, 1, ownLogs.Count("lease keys deleted", "key=own"))
	assert.Zero(t, clientLogs.Count("key=own"), "a lease's own Logger replaces the client's")
}
