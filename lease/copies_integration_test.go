package lease

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/hookstest"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/redlock"
)

// A lease held on 3 real servers whose copy is lost on one (another value
// there, which a restore never overwrites) keeps refreshing on the other
// two:
// one warning, from the client's logger, which the lease uses too; the
// refreshes' Event.Spare falls from 1 to 0 and stays there, with no
// warning on the later refreshes (#32 item 7).
func TestIntegrationLostCopyWarnsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real redis-server processes")
	}
	ctx := context.Background()
	rig := redistest.StartRig(t, 3, redistest.RigOptions{})
	logs := &testnodes.LogBuffer{T: t}
	h := &hookstest.Recorder{}
	c := newClient(t, redlock.Config{NodeTimeout: 200 * time.Millisecond, Hooks: h.Observe,
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: logs})}, rig.Nodes)
	t.Cleanup(rig.Heal)
	cfg := Config{TTL: 2 * time.Second, RenewInterval: 100 * time.Millisecond, RetryInterval: 50 * time.Millisecond}
	l, err := TryAcquire(ctx, c, "spare", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Release(context.Background()) })

	spares := func() []int {
		var out []int
		for _, ev := range h.Of(redlock.EventExtend) {
			if ev.Key == "spare" && ev.Err == nil {
				out = append(out, ev.Spare)
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(spares()) > 0 }, 5*time.Second, 5*time.Millisecond, "no refresh")
	require.Equal(t, 1, spares()[0], "3 of 3 nodes hold it: one spare")

	// Node 1's copy replaced by another value: a copy the restore cannot
	// put back (it never overwrites a value).
	require.NoError(t, rig.Direct[1].Set(ctx, "spare", "another", 0).Err())
	require.Eventually(t, func() bool { sp := spares(); return sp[len(sp)-1] == 0 }, 5*time.Second, 5*time.Millisecond,
		"Event.Spare never fell to 0 with node 1's copy replaced")
	seen := len(spares())
	require.Eventually(t, func() bool { return len(spares()) >= seen+5 }, 5*time.Second, 5*time.Millisecond,
		"the lease stopped refreshing on 2 of 3 nodes")
	assert.True(t, l.Held())
	sp := spares()
	assert.Equal(t, []int{0, 0, 0, 0, 0}, sp[len(sp)-5:], "another value is never overwritten")
	assert.Equal(t, 1, logs.Count("[WARN]", "held on a bare majority, no spare", "key=spare", "holding=2", "nodes=3", "spare=0"),
		"one warning per change, not one per refresh:\n%s", logs.String())
	assert.Equal(t, 1, logs.Count("lock copy"), logs.String())
}
