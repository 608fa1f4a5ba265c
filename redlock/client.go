package redlock

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"
)

// Client runs the Redlock algorithm over N independent Redis masters.
//
// A Client is safe for concurrent use. It starts no goroutine of its own
// beyond the requests of a call: requests to slow nodes may outlive the call
// that made them (a call returns at quorum), bounded by the go-redis
// client's socket timeouts; [Client.Close] waits for them. A closed Client
// cannot be reused.
type Client struct {
	cfg    Config
	nodes  []*node   // the voters of a key in bucket 0: every key's, but on a bucketed cluster
	sets   [][]*node // the voters of each bucket (one set but on a bucketed cluster)
	all    []*node   // every set's nodes, set after set
	quorum int
	log    hclog.Logger

	wg        sync.WaitGroup // requests in flight
	mu        sync.RWMutex   // held shared by calls, exclusively by Close
	closed    bool
	closing   chan struct{}
	closeOnce sync.Once

	raising atomic.Bool // a raisePass is running
	ready   readiness   // when the next raisePass is due (readiness.go)
	args    scriptArgs  // constant script arguments

	cluster   *redis.ClusterClient // NewCluster only
	placement clusterState

	owned []redis.UniversalClient // made by Dial; closed by Close
}

// New returns a Client over the given nodes, one vote each; the caller
// keeps ownership of the go-redis clients and closes them after Close.
//
// New checks the configuration, refuses a nil node and two nodes that are
// the same server (same address, or same run_id where the node answers;
// FailoverClients of Sentinel groups, which all have the address
// "FailoverClient", by run_id only),
// refuses nodes whose maxmemory-policy may evict keys (unless
// Config.AllowEviction), and touches every node so that the quarantine of
// nodes that have never been seen starts now (see [Client.Bootstrap]).
// A node that does not answer is logged, not refused: it can vote once it
// is up. A node that refuses the credentials (WRONGPASS, NOAUTH) or whose
// ACL refuses what redlease needs (NOPERM) is refused with an error
// matching [ErrAccessDenied]: that lasts until an operator acts. New
// returns ctx's error if ctx ends before the nodes were checked. N should
// be odd; an even N is allowed with a warning, N=1 is a single-instance
// lock.
func New(ctx context.Context, cfg Config, nodes ...redis.UniversalClient) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("redlock: New: %w", err)
	}
	cfg = cfg.withDefaults()
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%w: no nodes given", ErrInvalidConfig)
	}
	c := &Client{cfg: cfg, log: cfg.Logger, quorum: len(nodes)/2 + 1, closing: make(chan struct{})}
	c.initArgs()
	seen := make(map[string]int, len(nodes))
	given := make(map[uintptr]int, len(nodes)) // one client object twice
	for i, nc := range nodes {
		if isNil(nc) {
			return nil, fmt.Errorf("%w: node %d is nil", ErrInvalidConfig, i)
		}
		if v := reflect.ValueOf(nc); v.Kind() == reflect.Pointer {
			if j, dup := given[v.Pointer()]; dup {
				return nil, fmt.Errorf("%w: nodes %d and %d are the same client: one server, one vote", ErrInvalidConfig, j, i)
			}
			given[v.Pointer()] = i
		}
		name, fixed := configuredName(nc, i)
		n := newNode(nc, name, fixed)
		n.idx = i
		if rc, ok := nc.(*redis.Client); ok {
			n.ownDeadline = rc.Options().ContextTimeoutEnabled
		}
		if cc, ok := nc.(*redis.ClusterClient); ok {
			n.tag, n.cluster = "redlease", cc // one vote: the slot of {redlease}
		}
		// An address names one server only where the client's options
		// say where to connect; FailoverClients of different groups all
		// say "FailoverClient". Those are told apart by run_id below.
		if n.nm.fixed {
			if j, dup := seen[n.name()]; dup {
				return nil, fmt.Errorf("%w: nodes %d and %d are the same server (%s): one server, one vote",
					ErrInvalidConfig, j, i, n.name())
			}
			seen[n.name()] = i
		}
		c.nodes = append(c.nodes, n)
	}
	c.sets, c.all = [][]*node{c.nodes}, c.nodes
	if len(nodes)%2 == 0 {
		c.log.Warn("even number of nodes: one more node would tolerate one more failure at the same quorum",
			"nodes", len(nodes), "quorum", c.quorum)
	}
	if err := c.checkNodes(ctx, false); err != nil {
		_ = c.Close() // waits for the probes still running
		return nil, err
	}
	return c, nil
}

// Bootstrap declares the nodes brand new: every node that has no quarantine
// marker, or is still in its quarantine, gets a marker dated MaxTTL ago, so
// it votes at once instead of after MaxTTL. It is an operator's act for a
// fresh deployment, where no lock can have existed (the examples on
// embedded miniredis use it). Never run it after a crash or a restart: a
// node that lost its locks would vote again while those locks may still be
// held elsewhere. Nodes that already vote are left as they are. Bootstrap
// returns an error naming every node it could not reach.
func (c *Client) Bootstrap(ctx context.Context) error {
	return c.checkNodes(ctx, true)
}

// probeInfo is what a node reports about itself at start-up.
type probeInfo struct {
	left    time.Duration
	runID   string
	infoErr string // INFO server's error inside scripts ('' when it answers)
	raised  bool   // its fencing floor is raised (or needs no raise)
}

// checkNodes probes every node (starting quarantine clocks, or with
// bootstrap pre-dating new markers), refuses duplicate servers by run_id
// and evicting memory policies, and logs what it is waiting for.
func (c *Client) checkNodes(ctx context.Context, bootstrap bool) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.mu.RUnlock()
	// A readiness pass of its own: what it finds replaces what earlier
	// calls saw (after Bootstrap, nothing waits).
	c.ready.last.Store(time.Now().UnixNano())
	c.ready.want.Store(false)
	c.ready.due.Store(0)
	// Probes get longer than NodeTimeout (connections are new), and are
	// cut by a timer: go-redis may not honour ctx on a stalled socket.
	type probed struct {
		i    int
		info probeInfo
		err  error
	}
	wait := max(time.Second, c.cfg.NodeTimeout)
	ch := make(chan probed, len(c.all))
	for i, n := range c.all {
		c.wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			info, err := c.probe(pctx, n, bootstrap)
			ch <- probed{i, info, err}
		})
	}
	infos := make([]probeInfo, len(c.all))
	errs := make([]error, len(c.all))
	for i := range errs {
		errs[i] = fmt.Errorf("no answer within %s", wait)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
collect:
	for range c.all {
		select {
		case p := <-ch:
			infos[p.i], errs[p.i] = p.info, p.err
		case <-timer.C:
			break collect
		case <-ctx.Done():
			break collect
		}
	}

	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redlock: nodes not checked: %w", err)
	}
	var unreachable, denied, quarantined []string
	var longest time.Duration
	byRunID := make(map[string]int)
	for i, n := range c.all {
		if errs[i] != nil {
			if errors.Is(errs[i], ErrInvalidConfig) {
				return errs[i]
			}
			if accessDenied(errs[i]) {
				denied = append(denied, fmt.Sprintf("%s: %v", n.name(), errs[i]))
				continue
			}
			unreachable = append(unreachable, fmt.Sprintf("%s: %v", n.name(), errs[i]))
			c.log.Warn("node did not answer at start-up", "node", n.name(), "error", errs[i])
			continue
		}
		n.answered()
		c.answeredBy(n, serverID(infos[i].runID)) // a cluster copy: the server behind it now
		if id := infos[i].runID; id != "" && n.cluster == nil {
			if j, dup := byRunID[id]; dup {
				return fmt.Errorf("%w: nodes %s and %s are the same server (run_id %s): one server, one vote",
					ErrInvalidConfig, c.all[j].name(), n.name(), id)
			}
			byRunID[id] = i
		}
		if e := infos[i].infoErr; e != "" && scriptReplyClass(e) == ClassPermission {
			c.log.Warn("INFO server is refused to redlease's scripts on this node: two addresses of one server cannot be told apart, nor a restart from data or a promoted replica; grant +info (see Security in the README)",
				"node", n.name(), "error", e)
		}
		if !infos[i].raised || infos[i].left > 0 {
			c.sawQuarantine(infos[i].left, infos[i].raised)
		}
		if left := infos[i].left; left > 0 {
			// One entry per copy of a bucketed cluster: its other
			// buckets' markers were made at the same moment.
			if n.bucket == 0 {
				quarantined = append(quarantined, fmt.Sprintf("%s (%s)", n.name(), left.Round(time.Millisecond)))
			}
			longest = max(longest, left)
		}
	}
	if len(quarantined) > 0 && !c.cfg.quietQuarantine {
		c.log.Warn(quarantineMsg, "nodes", strings.Join(quarantined, ", "), "wait", longest.Round(time.Millisecond),
			"ways_out", "Client.Bootstrap for a brand-new deployment; Config.DisableQuarantine where every write is fsynced (appendfsync always)")
	}
	if len(denied) > 0 {
		return fmt.Errorf("%w: fix the credentials or the ACL of: %s", ErrAccessDenied, strings.Join(denied, "; "))
	}
	if bootstrap && len(unreachable) > 0 {
		return fmt.Errorf("redlock: bootstrap did not reach every node: %s", strings.Join(unreachable, "; "))
	}
	return nil
}

// quarantineMsg is the message of New's one log record about the nodes
// that do not vote yet (a program that says it its own way turns it off:
// internal/redlockx.QuietQuarantine).
const quarantineMsg = "nodes are quarantined: they have no marker, or restarted, and may have forgotten locks; they vote after the quarantine"

// probe checks one node's configuration, then runs probe.lua on it. The
// configuration comes first, so that a node that fails the script (out of
// memory, say) is still refused for an evicting policy.
func (c *Client) probe(ctx context.Context, n *node, bootstrap bool) (probeInfo, error) {
	if err := c.checkConfig(ctx, n); err != nil {
		return probeInfo{}, err
	}
	res, err := scriptProbe.Run(ctx, n.client, []string{n.marker()},
		c.maxTTLArg(), c.quarantineMode(), flag(bootstrap), c.args.layout).Result()
	if err != nil {
		return probeInfo{}, noScripting(n, annotate(newCall(scriptProbe, []string{n.marker()}), classify(err)))
	}
	// Load the other scripts now, so that the first acquisition does not
	// pay a NOSCRIPT round trip.
	// (ScriptLoad, not Script.Load: the latter takes the server's reply as
	// the digest, and one odd node would change it for every client.)
	// A cluster's copies share one cluster client, which loads on every
	// master: the copies of one bucket do it.
	for _, s := range []*redis.Script{scriptAcquire, scriptFence, scriptExtend, scriptMany, scriptRelease, scriptRaise, scriptInspect} {
		if n.bucket > 0 {
			break
		}
		sha, err := n.client.ScriptLoad(ctx, scriptSource[s]).Result()
		if err != nil {
			return probeInfo{}, annotate(&scriptCall{script: s}, classify(err))
		}
		if sha != s.Hash() {
			c.log.Warn("node returned an unexpected script digest; its scripts will run by EVAL", "node", n.name(), "script", scriptNames[s])
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
		n.ident.observe(incarnation{server: serverID(info.runID), created: created})
	}
	n.learnName(ctx, serverID(info.runID))
	return info, nil
}

// checkConfig refuses an evicting memory policy (see conf.go) and warns
// about settings that weaken a node's vote. Nodes that do not allow CONFIG
// GET (managed services, ACL users, miniredis) are logged and accepted:
// the check cannot be made there. A node that cannot be read now is
// checked before its first vote.
func (c *Client) checkConfig(ctx context.Context, n *node) error {
	start := time.Now()
	conf, err := c.readConf(ctx, n)
	if err != nil {
		if confRefused(err) {
			n.conf.mu.Lock()
			n.conf.uncheckable = true
			n.conf.mu.Unlock()
			c.log.Debug("cannot read node configuration; maxmemory-policy not checked", "node", n.name(), "error", err)
		}
		return nil
	}
	refused := c.evicting(n, conf)
	n.conf.mu.Lock()
	n.conf.checkedAt, n.conf.refused = start, refused
	n.conf.mu.Unlock()
	if refused != nil {
		return refused
	}
	if n.cluster != nil && n.bucket == 0 && conf["cluster-require-full-coverage"] == "yes" {
		c.log.Warn("cluster-require-full-coverage is yes: while one failed master is being replaced, every master answers CLUSTERDOWN and no lock can be taken; set it to no so that one failure costs one vote",
			"node", n.name())
	}
	if c.cfg.DisableQuarantine && (conf["appendonly"] != "yes" || conf["appendfsync"] != "always") {
		c.log.Warn("quarantine is off but the node does not fsync every write: a restart can grant a lock twice",
			"node", n.name(), "appendonly", conf["appendonly"], "appendfsync", conf["appendfsync"])
	}
	return nil
}

// Close waits for the requests still in flight (bounded by the go-redis
// clients' socket timeouts) and makes further calls fail with ErrClosed.
// It closes the go-redis clients only of a Client made by [Dial]; those
// given to New stay the caller's. Closing twice is safe.
func (c *Client) Close() error {
	c.closeOnce.Do(func() { close(c.closing) }) // ends Acquire's waits
	c.mu.Lock()                                 // waits for calls to return
	owned := c.owned
	c.closed, c.owned = true, nil
	c.mu.Unlock()
	c.wg.Wait()
	for _, rc := range owned {
		_ = rc.Close()
	}
	return nil
}

// enter takes the shared lock of a call; the caller must RUnlock.
func (c *Client) enter() error {
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return ErrClosed
	}
	return nil
}

// Nodes returns the nodes' names, in the order given to New: the address
// of a redis.Client, the seed addresses of a ClusterClient; for the copies
// of [NewCluster], a hash slot ("slot 2730") with one bucket, the copy's
// index ("copy 0") with several (each copy has a slot per bucket). A client whose options name no server (one
// made by redis.NewFailoverClient for a Sentinel group, or a type redlock
// does not know) is named by its position, "failover#0" ("node#0"). These
// names never change; errors and logs add the server that answered last,
// such as "failover#0@10.0.0.5:6379" (the address the server says the
// connection reached, CLIENT INFO laddr; "failover#0@run_id:<12 hex
// digits>..." where CLIENT is refused), which follows a Sentinel group's
// master. Names are for people: nodes are told apart by run_id.
func (c *Client) Nodes() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.addr
	}
	return out
}

// isNil reports a nil interface or a typed nil pointer inside one.
func isNil(c redis.UniversalClient) bool {
	if c == nil {
		return true
	}
	v := reflect.ValueOf(c)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
