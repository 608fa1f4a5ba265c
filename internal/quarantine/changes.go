package quarantine

import (
	"context"
	"time"
)

// NoticeIdentity records what an answer of node n said about its server
// (m.Server, m.Created) and logs, once per node and event, that the node
// shows a quarantine marker it did not have before: another server
// answers (restart, failover, replacement: its run_id changed) or the
// server lost or replaced its data (FLUSHALL, a restart from a snapshot, a
// full resync). The node votes no until its quarantine is over. A node
// named by the server it reached learns its name again.
func (g *Guard) NoticeIdentity(n Node, m Marker) {
	prev, changed := n.Identity().Observe(Incarnation{Server: m.Server, Created: m.Created})
	if !changed {
		return
	}
	log := g.cfg.Log
	quarantine := m.Left
	if m.State != Quarantined {
		quarantine = 0
	}
	if prev.Server != 0 && m.Server != 0 && prev.Server != m.Server {
		const msg = "node is another server now (its run_id changed: a restart, a failover or a replaced server); it may have forgotten locks and votes no until its quarantine is over"
		if !n.NamedByServer() {
			log.Warn(msg, "node", n.Name(), "run_id", RunIDText(m.Server), "previous_run_id", RunIDText(prev.Server), "quarantine", quarantine)
			return
		}
		// A node named by the server it reached (a Sentinel group's
		// client) is named by the new run_id at once, then learns the
		// new server's address before the line is logged; in the
		// background: it is one more round trip.
		before := n.Name()
		n.Rename(m.Server)
		g.cfg.WG.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), max(time.Second, g.cfg.NodeTimeout))
			defer cancel()
			n.LearnName(ctx, m.Server)
			log.Warn(msg, "node", n.Name(), "previous_node", before, "run_id", RunIDText(m.Server), "previous_run_id", RunIDText(prev.Server), "quarantine", quarantine)
		})
		return
	}
	log.Warn("node has a new quarantine marker (its data was lost or replaced: FLUSHALL, a restart, a full resync); it may have forgotten locks and votes no until its quarantine is over",
		"node", n.Name(), "run_id", RunIDText(m.Server), "quarantine", quarantine)
}
