package quarantine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The guard's floor raising on its own, over fake nodes: which nodes get
// which floor, from an acquisition's answers and from a readiness pass.

type fakeNode struct {
	name  string
	id    Identity
	mu    sync.Mutex
	floor int64 // the raise it got (-1: none)
	fail  error
}

func (n *fakeNode) Name() string                     { return n.name }
func (n *fakeNode) Identity() *Identity              { return &n.id }
func (n *fakeNode) NamedByServer() bool              { return false }
func (n *fakeNode) Rename(int64)                     {}
func (n *fakeNode) LearnName(context.Context, int64) {}
func (n *fakeNode) RaiseFloor(_ context.Context, _, floor int64) (bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fail != nil {
		return false, n.fail
	}
	n.floor = floor
	return true, nil
}

func (n *fakeNode) raised() int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.floor
}

func fakeNodes(k int) ([]Node, []*fakeNode) {
	ns, fs := make([]Node, k), make([]*fakeNode, k)
	for i := range fs {
		fs[i] = &fakeNode{name: string(rune('a' + i)), floor: -1}
		ns[i] = fs[i]
	}
	return ns, fs
}

// newGuard is a guard over k nodes whose passes read marks.
func newGuard(t *testing.T, k int, marks func() []Marker, nodes []Node) (*Guard, *sync.WaitGroup) {
	wg := &sync.WaitGroup{}
	t.Cleanup(wg.Wait)
	g := &Guard{}
	g.Init(GuardConfig{Quorum: k/2 + 1, SetSize: k, NodeTimeout: time.Second, Log: hclog.NewNullLogger(), WG: wg,
		Probe: func(context.Context) []Probed {
			ms := marks()
			out := make([]Probed, len(ms))
			for i, m := range ms {
				out[i] = Probed{Node: nodes[i], Marker: m}
			}
			return out
		}})
	return g, wg
}

func TestRaiseForgetfulFromHealthyMajority(t *testing.T) {
	nodes, fs := fakeNodes(3)
	passes := 0
	g, wg := newGuard(t, 3, func() []Marker { passes++; return nil }, nodes)
	g.RaiseForgetful(nodes, []Marker{
		{State: Healthy, High: 7}, {State: Healthy, High: 9}, {State: Quarantined, Created: 5, High: 40, Left: time.Second},
	})
	wg.Wait()
	assert.Equal(t, []int64{-1, -1, 9}, []int64{fs[0].raised(), fs[1].raised(), fs[2].raised()})
	assert.Zero(t, passes, "a healthy majority needs no pass")
}

func TestRaiseForgetfulWithoutMajorityRunsAPass(t *testing.T) {
	nodes, fs := fakeNodes(3)
	marks := []Marker{{State: Healthy, High: 7}, {State: Quarantined, Created: 3}, {State: Quarantined, Created: 4, High: 2}}
	g, wg := newGuard(t, 3, func() []Marker { return marks }, nodes)
	g.RaiseForgetful(nodes, marks)
	wg.Wait()
	// Every node answered and both quarantines are over: the highest
	// token any node reports.
	assert.Equal(t, []int64{-1, 7, 7}, []int64{fs[0].raised(), fs[1].raised(), fs[2].raised()})
}

func TestRaiseFailureWantsAnotherPass(t *testing.T) {
	nodes, fs := fakeNodes(3)
	fs[2].fail = errors.New("connection refused")
	g, wg := newGuard(t, 3, func() []Marker { return nil }, nodes)
	g.RaiseForgetful(nodes, []Marker{{State: Healthy}, {State: Healthy}, {State: Quarantined, Created: 1}})
	wg.Wait()
	assert.True(t, g.Ready.Wanted(), "the next pass tries again")
}

func TestPassPerSet(t *testing.T) {
	nodes, fs := fakeNodes(6) // two sets of 3
	marks := []Marker{
		{State: Healthy, High: 3}, {State: Healthy, High: 4}, {State: Quarantined, Created: 1, Left: time.Second},
		{State: Healthy, High: 8}, {State: Quarantined, Created: 1}, {State: Healthy, High: 6},
	}
	wg := &sync.WaitGroup{}
	g := &Guard{}
	g.Init(GuardConfig{Quorum: 2, SetSize: 3, NodeTimeout: time.Second, Log: hclog.NewNullLogger(), WG: wg,
		Probe: func(context.Context) []Probed {
			out := make([]Probed, len(marks))
			for i, m := range marks {
				out[i] = Probed{Node: nodes[i], Marker: m}
			}
			return out
		}})
	g.Pass()
	wg.Wait()
	got := make([]int64, len(fs))
	for i, f := range fs {
		got[i] = f.raised()
	}
	assert.Equal(t, []int64{-1, -1, 4, -1, 8, -1}, got, "each set's floor from its own healthy nodes")
	assert.EqualValues(t, 8, g.Ready.High())
}

// The zero Guard, and one without Probe (quarantine off), make no passes.
func TestGuardWithoutProbe(t *testing.T) {
	var g Guard
	g.PassIfDue()
	g.Pass()
	require.False(t, g.raising.Load())
}
