package quarantine

import (
	"context"

	"github.com/hashicorp/go-hclog"
)

// RaiseForgetful lifts the fencing floor of the quarantined nodes among an
// acquisition's answers (marks[i] is nodes[i]'s; docs/design.md §4.9, S6)
// to the highest token seen on a majority of healthy nodes, so that once
// they vote again no token can go back. It runs in the background; the
// nodes vote no until it has landed. Without a healthy majority among the
// answers it leaves the decision to a readiness pass, which reads every
// node itself.
func (g *Guard) RaiseForgetful(nodes []Node, marks []Marker) {
	var healthy int
	var floor int64
	var todo []int
	for i, a := range marks {
		switch a.State {
		case Healthy:
			healthy++
			floor = max(floor, a.High)
		case Quarantined:
			todo = append(todo, i)
		}
	}
	switch {
	case len(todo) == 0:
		return
	case healthy < g.cfg.Quorum:
		g.Pass()
		return
	}
	for _, i := range todo {
		a, n := marks[i], nodes[i]
		g.cfg.WG.Go(func() {
			if g.raise(n, a.Created, floor) {
				g.logRaised(n, a.Created, hclog.Info, "fencing floor raised; the node votes once its quarantine is over",
					"floor", floor, "quarantine_left", a.Left)
			} else {
				g.Ready.Want() // the next pass tries again
			}
		})
	}
}

// Pass reads the marker of every node and raises the quarantined ones:
// from the healthy nodes when a majority of them answers; otherwise, only
// when every node answers and every node that is not healthy is one whose
// quarantine is over (none merely unreachable: an unreachable node may be a
// healthy one holding the highest token), from the highest token any node
// reports or this client saw, logged: a fresh deployment that was not
// bootstrapped (no token anywhere: nothing can repeat, an Info line), or a
// majority that lost its state together (a warning: tokens are only as good
// as what survived). Otherwise the nodes stay closed, and the pass runs
// again when their quarantine ends or a node answers again (see
// [Readiness]). probe.lua also starts the quarantine of a node that has no
// marker. One pass at a time runs, in the background.
func (g *Guard) Pass() {
	if g.cfg.Probe == nil || !g.raising.CompareAndSwap(false, true) {
		return
	}
	g.cfg.WG.Go(func() {
		defer g.raising.Store(false)
		all := g.cfg.Probe(context.Background())
		seen := g.Ready.High() // tokens this client saw handed out or reported
		k := g.cfg.SetSize
		for b := 0; (b+1)*k <= len(all); b++ {
			g.raiseSet(all[b*k:(b+1)*k], seen)
		}
	})
}

// raiseSet is Pass for one set of voters (a bucket of a cluster Client:
// its floors come from its own copies), given their markers' answers and
// the highest token the client saw before the pass.
func (g *Guard) raiseSet(set []Probed, seen int64) {
	marks := make([]Marker, len(set))
	for i, p := range set {
		marks[i] = p.Marker
	}
	m := readMarkers(marks)
	g.Ready.SawHigh(m.floorAll)
	quorum := g.cfg.Quorum
	if m.closed(quorum) {
		// Fail closed: wait for more nodes, or for quarantines to end.
		for _, a := range marks {
			if a.State == Quarantined {
				g.Ready.SawQuarantine(a.Left, true) // a pass at its end
			}
		}
		if m.unreachable > 0 {
			g.Ready.Want()
		}
		return
	}
	for i, a := range marks {
		n := set[i].Node
		floor, ok := m.floor(a, quorum, seen)
		switch {
		case !ok:
		case !g.raise(n, a.Created, floor):
			g.Ready.Want()
		case !m.degraded(quorum):
			g.logRaised(n, a.Created, hclog.Info, "fencing floor raised; the node votes once its quarantine is over",
				"floor", floor, "quarantine_left", a.Left)
		case floor == 0:
			g.logRaised(n, a.Created, hclog.Info, "no node reports a fencing token and this client saw none: fresh nodes, the node votes now (Client.Bootstrap skips the first quarantine of a new deployment)",
				"floor", floor)
		default:
			g.logRaised(n, a.Created, hclog.Warn, "no healthy majority: a node's fencing floor was raised from what every node reports; tokens may repeat if a majority lost its state",
				"floor", floor)
		}
	}
}

// raise raises n's floor to floor if its marker is still incarnation
// created, within NodeTimeout; a failure is logged at Debug.
func (g *Guard) raise(n Node, created, floor int64) bool {
	ctx, cancel := context.WithTimeout(context.Background(), g.cfg.NodeTimeout)
	defer cancel()
	ok, err := n.RaiseFloor(ctx, created, floor)
	if err != nil {
		g.cfg.Log.Debug("raising fencing floor failed", "node", n.Name(), "error", err)
		return false
	}
	return ok
}

// logRaised logs at level, once per node and marker, that a quarantined
// node's fencing floor was raised.
func (g *Guard) logRaised(n Node, created int64, level hclog.Level, msg string, args ...any) {
	if !n.Identity().FirstRaise(created) {
		return
	}
	g.cfg.Log.Log(level, msg, append([]any{"node", n.Name()}, args...)...)
}
