package redlock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/logx"
	"github.com/redlease/redlease/internal/nodecheck"
	"github.com/redlease/redlease/internal/placement"
	"github.com/redlease/redlease/internal/quarantine"
	"github.com/redlease/redlease/internal/rediserr"
	"github.com/redlease/redlease/internal/redlockx"
	"github.com/redlease/redlease/internal/scripts"
)

// probeInfo is what a node reports about itself at start-up.
type probeInfo struct {
	left    time.Duration
	runID   string
	infoErr string // INFO server's error inside scripts ('' when it answers)
	raised  bool   // its fencing floor is raised (or needs no raise)
}

// checkNodes probes every node of c (starting quarantine clocks, or with
// bootstrap pre-dating new markers), refuses duplicate servers by run_id
// and evicting memory policies, and logs what it is waiting for.
func checkNodes(ctx context.Context, c *Client, bootstrap bool) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.mu.RUnlock()
	// A readiness pass of its own: what it finds replaces what earlier
	// calls saw (after Bootstrap, nothing waits).
	c.guard.Ready.Restart(time.Now().UnixNano())
	s := startupOf(c)
	if bootstrap {
		// An operator's act, rare and waited for: a node slow to answer
		// (a loaded host, a first connection over TLS) is not "unreachable".
		s.wait = max(bootstrapWait, 4*c.cfg.NodeTimeout)
	}
	infos, errs := s.probeAll(ctx, bootstrap)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redlock: nodes not checked: %w", err)
	}
	for i, n := range s.all {
		if err := s.node(n, infos[i], errs[i]); err != nil {
			return err
		}
	}
	return s.verdict(bootstrap)
}

// probeAll probes every node at once and returns what each reported, or
// why it did not (errs[i] is s.all[i]'s). Probes get longer than
// NodeTimeout (connections are new), and are cut by a timer: go-redis may
// not honour ctx on a stalled socket. It returns early when ctx ends.
func (s *startup) probeAll(ctx context.Context, bootstrap bool) (infos []probeInfo, errs []error) {
	type probed struct {
		i    int
		info probeInfo
		err  error
	}
	wait := s.wait
	ch := make(chan probed, len(s.all))
	for i, n := range s.all {
		s.wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			info, err := s.prober.probe(pctx, n, bootstrap)
			ch <- probed{i, info, err}
		})
	}
	infos = make([]probeInfo, len(s.all))
	errs = make([]error, len(s.all))
	for i := range errs {
		errs[i] = fmt.Errorf("no answer within %s", logx.RoundDuration(wait))
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for range s.all {
		select {
		case p := <-ch:
			infos[p.i], errs[p.i] = p.info, p.err
		case <-timer.C:
			return infos, errs
		case <-ctx.Done():
			return infos, errs
		}
	}
	return infos, errs
}

// startup gathers what the start-up probes of the nodes found: the nodes
// refused, unreachable or in quarantine, and the servers seen by run_id.
type startup struct {
	all       []*node // the nodes to probe, set after set
	prober    prober
	wait      time.Duration // how long a probe may take
	wg        *sync.WaitGroup
	log       hclog.Logger
	guard     *quarantine.Guard
	placement *placement.Watcher

	unreachable, denied, quarantined []string
	longest                          time.Duration // the longest quarantine left
	byRunID                          map[string]*node
}

// bootstrapWait is how long Bootstrap waits for a node's answer at least
// (New waits max(1s, NodeTimeout): a silent node must not stall start-up).
const bootstrapWait = 5 * time.Second

// startupOf is a start-up check of c's nodes, with c's settings.
func startupOf(c *Client) *startup {
	return &startup{all: c.all, wait: max(time.Second, c.cfg.NodeTimeout), wg: &c.wg, log: c.log,
		guard: &c.guard, placement: &c.placement, byRunID: make(map[string]*node),
		prober: prober{check: &c.check, args: &c.args, log: c.log, quarantineOff: c.cfg.DisableQuarantine,
			functionsOff: c.cfg.DisableFunctions}}
}

// node takes node n's probe: what it reported (info), or why not (err).
// An error it returns refuses the nodes at once.
func (s *startup) node(n *node, info probeInfo, err error) error {
	if err != nil {
		if errors.Is(err, ErrInvalidArgument) {
			return err
		}
		if accessDenied(err) {
			s.denied = append(s.denied, fmt.Sprintf("%s: %v", n.name(), err))
			return nil
		}
		s.unreachable = append(s.unreachable, fmt.Sprintf("%s: %v", n.name(), err))
		s.log.Warn("node did not answer at start-up", "node", n.name(), "error", err)
		return nil
	}
	n.heard.Answered()
	if n.cluster != nil {
		s.placement.AnsweredBy(&n.server, serverID(info.runID)) // a cluster copy: the server behind it now
	}
	if id := info.runID; id != "" && n.cluster == nil {
		if m, dup := s.byRunID[id]; dup {
			return fmt.Errorf("%w: nodes %s and %s are the same server (run_id %s): one server, one vote",
				ErrInvalidArgument, m.name(), n.name(), id)
		}
		s.byRunID[id] = n
	}
	if e := info.infoErr; e != "" && scriptReplyClass(e) == rediserr.Permission {
		s.log.Warn("INFO server is refused to redlease's scripts on this node: two addresses of one server cannot be told apart, nor a restart from data or a promoted replica; grant +info (see Security in the README)",
			"node", n.name(), "error", e)
	}
	if !info.raised || info.left > 0 {
		s.guard.Ready.SawQuarantine(info.left, info.raised)
	}
	n.heard.SawQuarantine(info.left, info.raised)
	if left := info.left; left > 0 {
		// One entry per copy of a bucketed cluster: its other
		// buckets' markers were made at the same moment.
		if n.bucket == 0 {
			s.quarantined = append(s.quarantined, fmt.Sprintf("%s (%s)", n.name(), left.Round(time.Millisecond)))
		}
		s.longest = max(s.longest, left)
	}
	return nil
}

// verdict logs the nodes in quarantine and refuses the nodes when one
// refused the credentials or permissions, or, for bootstrap, when one was
// not reached.
func (s *startup) verdict(bootstrap bool) error {
	if len(s.quarantined) > 0 {
		s.log.Warn(quarantineMsg, "nodes", strings.Join(s.quarantined, ", "), "wait", s.longest.Round(time.Millisecond),
			"ways_out", "Client.Bootstrap for a brand-new deployment; Config.DisableQuarantine where every write is fsynced (appendfsync always)")
	}
	if len(s.denied) > 0 {
		return fmt.Errorf("%w: fix the credentials or the ACL of: %s", ErrAccessDenied, strings.Join(s.denied, "; "))
	}
	if bootstrap && len(s.unreachable) > 0 {
		return fmt.Errorf("redlock: bootstrap did not reach every node: %s", strings.Join(s.unreachable, "; "))
	}
	return nil
}

// quarantineMsg is the message of New's one log record about the nodes
// that do not vote yet (internal/redlockx.QuarantineLog).
const quarantineMsg = redlockx.QuarantineLog

// prober probes one node at start-up, with a Client's settings.
type prober struct {
	check         *nodecheck.Checker
	args          *scriptArgs
	log           hclog.Logger
	quarantineOff bool // Config.DisableQuarantine
	functionsOff  bool // Config.DisableFunctions
}

// probe checks one node's configuration, then runs probe.lua on it. The
// configuration comes first, so that a node that fails the script (out of
// memory, say) is still refused for an evicting policy.
func (p prober) probe(ctx context.Context, n *node, bootstrap bool) (probeInfo, error) {
	if err := p.checkConfig(ctx, n); err != nil {
		return probeInfo{}, err
	}
	sc := scripts.NewCall(scripts.Probe, []string{n.marker()}, p.args.maxTTL, p.args.mode, flag(bootstrap), p.args.layout, newNonce())
	res, err := p.runProbe(ctx, n, sc)
	if err != nil {
		return probeInfo{}, noScripting(n, annotate(scripts.NewCall(scripts.Probe, []string{n.marker()}), classify(err)))
	}
	// Load the other scripts now (see preloaded). A cluster's copies share
	// one cluster client, which loads on every master: the copies of one
	// bucket do it.
	if n.bucket == 0 {
		if err := preloaded.load(ctx, n.client, func(s *redis.Script) {
			p.log.Warn("node returned an unexpected script digest; its scripts will run by EVAL", "node", n.name(), "script", scripts.Name(s))
		}); err != nil {
			return probeInfo{}, err
		}
	}
	a, err := replyArray(res, 5)
	if err != nil {
		return probeInfo{}, err
	}
	left, ok := asInt(a[0])
	if !ok {
		return probeInfo{}, badReply(res)
	}
	raised, _ := asInt(a[1])
	info := probeInfo{left: time.Duration(left) * time.Millisecond, runID: asString(a[2]), raised: raised == 1}
	if len(a) > 5 {
		info.infoErr = asString(a[5])
	}
	if created, ok := asInt(a[3]); ok {
		n.ident.Observe(quarantine.Incarnation{Server: serverID(info.runID), Created: created})
	}
	n.LearnName(ctx, serverID(info.runID))
	return info, nil
}

// checkConfig refuses an evicting memory policy (see conf.go) and warns
// about settings that weaken a node's vote. Nodes that do not allow CONFIG
// GET (managed services, ACL users, miniredis) are logged and accepted:
// the check cannot be made there. A node that cannot be read now is
// checked before its first vote.
func (p prober) checkConfig(ctx context.Context, n *node) error {
	conf, err := p.check.First(ctx, n)
	if err != nil || conf == nil {
		return err
	}
	if n.cluster != nil && n.bucket == 0 && conf["cluster-require-full-coverage"] == "yes" {
		p.log.Warn("cluster-require-full-coverage is yes: while one failed master is being replaced, every master answers CLUSTERDOWN and no lock can be taken; set it to no so that one failure costs one vote",
			"node", n.name())
	}
	if p.quarantineOff && (conf["appendonly"] != "yes" || conf["appendfsync"] != "always") {
		p.log.Warn("quarantine is off but the node does not fsync every write: a restart can grant a lock twice",
			"node", n.name(), "appendonly", conf["appendonly"], "appendfsync", conf["appendfsync"])
	}
	return nil
}
