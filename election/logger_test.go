package election

import (
	"testing"

	"github.com/redlease/redlease/internal/testing/testnodes"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"
)

// An elector whose Lease.Logger is nil logs to its client's logger (#32:
// one logger, set once on the client).
func TestLoggerDefaultsToClients(t *testing.T) {
	_, nodes := testnodes.Minis(t, 3)
	clientLogs := &testnodes.LogBuffer{T: t}
	ccfg := unitClientCfg
	ccfg.Logger = hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: clientLogs})
	cfg := unitCfg(t, "logs-1")
	cfg.Lease.Logger = nil
	e := newElector(t, newClient(t, ccfg, nodes), "logs", cfg)
	start(t, e)
	waitEvent(t, e.Events(), wait, kind(EventElected))
	assert.Equal(t, 1, clientLogs.Count("elected", "key=logs", "id=logs-1"), "the elector logs to the client's logger")
}
