package redlock

import (
	"context"

	"github.com/redlease/redlease/internal/scripts"
)

// useFunctions sets node n's mode at start-up (docs/design.md §4.7.5):
// FCALL of the Function library where it loads (FUNCTION LOAD), whose
// incarnation token spares acquisitions INFO server; EVALSHA, with the
// full check on every acquisition, where FUNCTION is refused (ACL),
// unknown (an old server, a proxy, miniredis), turned off
// (Config.DisableFunctions), or on a cluster (not yet). The mode is
// logged once per node, and again when it changes.
func (p prober) useFunctions(ctx context.Context, n *node) {
	why := ""
	switch {
	case p.functionsOff:
		why = "Config.DisableFunctions"
	case n.cluster != nil:
		why = "a Redis Cluster node"
	default:
		if err := scripts.LoadLibrary(ctx, n.client); err != nil {
			why = err.Error()
		}
	}
	p.setMode(n, why == "", why)
}

// setMode sets n's mode (fcall: FCALL, else EVALSHA for the reason why),
// logged the first time and when it changes.
func (p prober) setMode(n *node, on bool, why string) {
	first := !n.modeLogged.Swap(true)
	if was := n.fcall.Swap(on); was == on && !first {
		return
	}
	if on {
		p.log.Info("node runs redlease's scripts as a Function library (FCALL), with its incarnation token",
			"node", n.name(), "library", "redlease_"+scripts.Version)
		return
	}
	p.log.Info("node runs redlease's scripts by EVALSHA, with the full quarantine check on every acquisition",
		"node", n.name(), "reason", why)
}
