package redistest_test

import (
	"context"
	"testing"
	"time"

	"github.com/redlease/redlease/internal/testing/redistest"
)

// TestRig: node 0 goes through a proxy, node 1 does not; a fault on the
// proxy and a paused server cut the nodes off, Heal lifts both, and Values
// reads what the nodes wrote through the direct clients.
func TestRig(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := redistest.StartRig(t, 2, redistest.RigOptions{Proxied: 1})
	equal(t, len(r.Direct), 2, "len(Direct)")
	equal(t, len(r.Nodes), 2, "len(Nodes)")
	if r.Proxies[0] == nil || r.Proxies[1] != nil {
		t.Fatalf("Proxies = %v, want a proxy for node 0 only", r.Proxies)
	}
	equal(t, r.Proxies[0].Target(), r.Server(0).Addr(), "proxy target")

	for i, n := range r.Nodes {
		must(t, n.Set(ctx, "k", i+1, 0).Err())
	}
	equal(t, r.Values("k"), []string{"1", "2"}, "Values")
	equal(t, r.Values("k", 1), []string{"2"}, "Values(1)")
	equal(t, r.Values("absent"), []string{"", ""}, "Values(absent)")

	r.Proxies[0].Disable()
	r.Proxies[0].ResetAll()
	must(t, r.Server(1).Pause())
	for i, n := range r.Nodes {
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		if err := n.Ping(short).Err(); err == nil {
			t.Fatalf("node %d answered through its fault", i)
		}
		cancel()
	}
	r.Heal()
	for _, n := range r.Nodes {
		must(t, n.Ping(ctx).Err())
	}
	fresh := r.NewNodes(t)
	equal(t, len(fresh), 2, "len(NewNodes)")
	v, err := fresh[0].Get(ctx, "k").Result()
	must(t, err)
	equal(t, v, "1", "a new node's read")
}
