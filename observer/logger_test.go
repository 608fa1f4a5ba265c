package observer

import (
	"testing"
	"time"

	"github.com/redlease/redlease/internal/testing/locktest"
	"github.com/redlease/redlease/internal/testing/testnodes"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/redlock"
)

// An observer whose Config sets no Logger logs to its client's; one that
// sets its own logs there only (#32).
func TestLoggerDefaultsToClients(t *testing.T) {
	_, nodes := testnodes.Minis(t, 3)
	clientLogs := &testnodes.LogBuffer{T: t}
	c := locktest.New(t, redlock.Config{NodeTimeout: 500 * time.Millisecond,
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: clientLogs})}, nodes, true)

	o, err := New(c, "svc", Config{})
	require.NoError(t, err)
	o.log.Info("probe of the default")
	assert.Equal(t, 1, clientLogs.Count("probe of the default"), "the observer logs to the client's logger")

	ownLogs := &testnodes.LogBuffer{T: t}
	o, err = New(c, "svc", Config{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: ownLogs})})
	require.NoError(t, err)
	o.log.Info("probe of its own")
	assert.Equal(t, 1, ownLogs.Count("probe of its own"))
	assert.Zero(t, clientLogs.Count("probe of its own"), "an observer's own Logger replaces the client's")
}
