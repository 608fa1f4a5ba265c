package redlock

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/redlease/redlease/internal/rediserr"
	"github.com/redlease/redlease/internal/scripts"
)

// functionsFor reports whether node n may run the scripts as the Function
// library (docs/design.md §4.7.5), and why not: it loads the library
// (FUNCTION LOAD); a load refused by an ACL still tries (an operator may
// have loaded it: the probe's FCALL tells). No where FUNCTION is unknown
// (an old server, a proxy, miniredis), turned off
// (Config.DisableFunctions), or on a cluster (not yet).
func (p prober) functionsFor(ctx context.Context, n *node) (bool, string) {
	switch {
	case p.functionsOff:
		return false, "Config.DisableFunctions"
	case n.cluster != nil:
		return false, "a Redis Cluster node"
	}
	err := scripts.LoadLibrary(ctx, n.client)
	if c, ok := replyClass(err); ok && c == rediserr.Permission {
		return true, firstLine(err.Error())
	}
	if err != nil {
		return false, firstLine(err.Error())
	}
	return true, ""
}

// runProbe runs the probe sc on n and sets n's mode: FCALL where
// functionsFor allows it and the FCALL answers (neither refused by an ACL
// nor "Function not found"), EVALSHA otherwise.
func (p prober) runProbe(ctx context.Context, n *node, sc *scriptCall) (any, error) {
	on, why := p.functionsFor(ctx, n)
	if on {
		res, err := n.client.Do(ctx, sc.FcallArgv()...).Result()
		err = classify(err)
		c, ok := replyClass(err)
		if !ok || (c != rediserr.Permission && c != rediserr.NoScript) {
			p.setMode(n, true, "")
			return res, err
		}
		if why != "" {
			why += "; "
		}
		why += firstLine(err.Error())
	}
	p.setMode(n, false, why)
	return sc.Run(ctx, n.client, &n.fcall)
}

// setMode sets n's mode (on: FCALL, else EVALSHA for the reason why),
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

// firstLine is s cut at its first line break and at 120 bytes (on a rune
// boundary), "..." marking a cut: a server that refuses FUNCTION LOAD
// may quote the whole library (~20 KB) in its error (miniredis does).
func firstLine(s string) string {
	const most = 120
	cut := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, cut = s[:i], true
	}
	if len(s) > most {
		i := most
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s, cut = s[:i], true
	}
	if cut {
		s += "..."
	}
	return s
}
