package quarantine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"

	"github.com/redlease/redlease/internal/testing/testnodes"
)

// A node's change of server or marker, logged once per event.

// sentinelNode is a node named by the server it reached.
type sentinelNode struct {
	fakeNode
	mu      sync.Mutex
	current string
}

func (n *sentinelNode) Name() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.current
}
func (n *sentinelNode) NamedByServer() bool { return true }
func (n *sentinelNode) Rename(server int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.current = "failover#0@run_id:" + RunIDText(server)
}
func (n *sentinelNode) LearnName(context.Context, int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.current = "failover#0@10.0.0.6:6379"
}

func guardLogging(t *testing.T) (*Guard, *testnodes.LogBuffer, *sync.WaitGroup) {
	out := &testnodes.LogBuffer{}
	wg := &sync.WaitGroup{}
	t.Cleanup(wg.Wait)
	g := &Guard{}
	g.Init(GuardConfig{Quorum: 2, SetSize: 3, NodeTimeout: time.Second, WG: wg,
		Log: hclog.New(&hclog.LoggerOptions{Output: out, Level: hclog.Trace})})
	return g, out, wg
}

func TestNoticeIdentityOncePerEvent(t *testing.T) {
	g, out, _ := guardLogging(t)
	n := &fakeNode{name: "10.0.0.5:6379"}
	g.NoticeIdentity(n, Marker{State: Healthy, Server: 0xa, Created: 100})
	assert.Empty(t, out.String(), "the first marker seen is no change")
	g.NoticeIdentity(n, Marker{State: Quarantined, Server: 0xb, Created: 200, Left: 3 * time.Second})
	g.NoticeIdentity(n, Marker{State: Quarantined, Server: 0xb, Created: 200, Left: 2 * time.Second})
	g.NoticeIdentity(n, Marker{State: Healthy, Server: 0xb, Created: 300})
	logs := out.String()
	assert.Equal(t, 1, out.Count("node is another server now"), logs)
	assert.Contains(t, logs, "run_id=00000000000b... previous_run_id=00000000000a... quarantine=3s")
	assert.Equal(t, 1, out.Count("node has a new quarantine marker"), logs)
	assert.Contains(t, logs, "quarantine=0s", "a healthy answer has no quarantine left")
}

// A node named by the server it reached learns its new name before the
// line is logged.
func TestNoticeIdentityRenamesSentinelNode(t *testing.T) {
	g, out, wg := guardLogging(t)
	n := &sentinelNode{current: "failover#0@10.0.0.5:6379"}
	g.NoticeIdentity(n, Marker{State: Healthy, Server: 0xa, Created: 100})
	g.NoticeIdentity(n, Marker{State: Quarantined, Server: 0xb, Created: 200, Left: time.Second})
	wg.Wait()
	assert.Contains(t, out.String(), `node="failover#0@10.0.0.6:6379" previous_node="failover#0@10.0.0.5:6379"`)
}
