package redlock

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"
)

// failoverAddr is the Addr of every client made by redis.NewFailoverClient
// (a Sentinel group): it names no server, and the group's master name is
// not reachable from the client once built.
const failoverAddr = "FailoverClient"

// configuredName names a client by its options, and says whether that name
// names one server: two clients that give the same one reach the same
// server (or cluster), so New refuses them at once. A Sentinel group's
// client (redis.NewFailoverClient) and client types redlock does not know
// name no server by their options; such a node is named by its position
// and, once it answered, by the address the server says it was reached
// on (see [node.learnName]), and duplicates are found by run_id.
func configuredName(c redis.UniversalClient, i int) (string, bool) {
	switch v := c.(type) {
	case *redis.Client:
		if a := v.Options().Addr; a != failoverAddr {
			return a, true
		}
		return "failover#" + strconv.Itoa(i), false
	case *redis.ClusterClient:
		return "cluster(" + strings.Join(v.Options().Addrs, ",") + ")", true
	case *redis.Ring:
		var addrs []string
		for _, a := range v.Options().Addrs {
			addrs = append(addrs, a)
		}
		slices.Sort(addrs)
		return "ring(" + strings.Join(addrs, ",") + ")", true
	default:
		return "node#" + strconv.Itoa(i), false
	}
}

// nodeName is a node's name for errors and logs (node.name): the
// configured address, or, for a node whose options name no server, its
// position and the address of the server that answered last
// ("failover#0@10.0.0.5:6379"), which changes when a Sentinel group fails
// over. node.addr keeps the stable name ([NodeResult.Node], notices,
// [NodeResult.Node]).
type nodeName struct {
	base  string // configured name, or position
	fixed bool   // base names one server
	cur   atomic.Pointer[string]
}

func (nn *nodeName) init(base string, fixed bool) {
	nn.base, nn.fixed = base, fixed
	nn.cur.Store(&base)
}

func (nn *nodeName) get() string { return *nn.cur.Load() }

// set names the node base@where ("" keeps its name).
func (nn *nodeName) set(where string) {
	if where != "" {
		s := nn.base + "@" + where
		nn.cur.Store(&s)
	}
}

// learnName asks the server which address this node's connection reached
// (CLIENT INFO laddr) and names the node by it. It asks INFO server on the
// same connection (one pipeline), and takes the address only from the
// server whose run_id begins as want (see serverID; the server an answer
// just showed; 0 takes any server): a client that follows a failover may
// still hold connections to the previous server for a moment, so it asks
// again until ctx ends. Where CLIENT or INFO is refused, or no answer comes
// from that server, the node is named by want's run_id. Nodes named by
// their options keep their name.
func (n *node) learnName(ctx context.Context, want int64) {
	if n.nm.fixed {
		return
	}
	where := ""
	if want != 0 {
		where = "run_id:" + runIDText(want)
	}
ask:
	for {
		laddr, runID, err := n.whereIs(ctx)
		if err != nil || laddr == "" {
			break // refused (ACL), an old server, or no answer
		}
		if want == 0 || serverID(runID) == want {
			where = laddr
			break
		}
		// A connection from before a failover: ask again.
		t := time.NewTimer(20 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			break ask
		case <-t.C:
		}
	}
	n.nm.set(where)
}

// whereIs returns the address the server says one connection reached
// (CLIENT INFO laddr) and that server's run_id (INFO server). An answer
// whose run_id is not the one asked for is not an error: learnName asks again.
func (n *node) whereIs(ctx context.Context) (laddr, runID string, err error) {
	var ci *redis.Cmd
	var info *redis.StringCmd
	_, err = n.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		ci = p.Do(ctx, "CLIENT", "INFO")
		info = p.Info(ctx, "server")
		return nil
	})
	if err != nil {
		return "", "", err
	}
	text, err := ci.Text()
	if err != nil {
		return "", "", err
	}
	for f := range strings.FieldsSeq(text) {
		if v, ok := strings.CutPrefix(f, "laddr="); ok {
			laddr = v
		}
	}
	for line := range strings.SplitSeq(info.Val(), "\r\n") {
		if v, ok := strings.CutPrefix(line, "run_id:"); ok {
			runID = v
		}
	}
	return laddr, runID, nil
}

// runIDText prints a server's id as the run_id it begins ("...": the
// scripts report 12 hex digits of the 40).
func runIDText(id int64) string { return fmt.Sprintf("%012x...", id) }

// incarnation is one quarantine marker of a node, as its answers show it:
// the run_id of the server that wrote it and when.
type incarnation struct {
	server  int64 // the first 48 bits of the server's run_id (see answer)
	created int64
}

// identity is what a node's answers said about the server behind it, so
// that a change (another server, a marker written anew) is logged once per
// node and event, whichever call sees it first, and the raise of a
// quarantined node's fencing floor once per marker.
type identity struct {
	mu     sync.Mutex
	seen   []incarnation // most recent last, a few kept
	raised []int64       // markers whose floor raise was logged
}

// keptIncarnations bounds what identity remembers: calls in flight at a
// change may report the previous marker after the new one, and must not
// make it look like a change again.
const keptIncarnations = 4

// observe records the marker an answer reports and returns the previous
// incarnation and true when it is one this node has not shown before,
// after a first one (the first is New's, logged by checkNodes).
func (id *identity) observe(inc incarnation) (incarnation, bool) {
	if inc.created == 0 {
		return incarnation{}, false // quarantine off, or no answer
	}
	id.mu.Lock()
	defer id.mu.Unlock()
	if slices.Contains(id.seen, inc) {
		return incarnation{}, false
	}
	var prev incarnation
	if len(id.seen) > 0 {
		prev = id.seen[len(id.seen)-1]
	}
	id.seen = append(id.seen, inc)
	if len(id.seen) > keptIncarnations {
		id.seen = slices.Delete(id.seen, 0, 1)
	}
	return prev, prev.created != 0
}

// firstRaise reports whether the raise of marker created is the first one
// this client logs.
func (id *identity) firstRaise(created int64) bool {
	id.mu.Lock()
	defer id.mu.Unlock()
	if slices.Contains(id.raised, created) {
		return false
	}
	id.raised = append(id.raised, created)
	if len(id.raised) > keptIncarnations {
		id.raised = slices.Delete(id.raised, 0, 1)
	}
	return true
}

// noticeIdentity logs, once per node and event, that a node's answer shows
// a quarantine marker it did not have before: another server answers
// (restart, failover, replacement: its run_id changed) or the server lost
// or replaced its data (FLUSHALL, a restart from a snapshot, a full
// resync). The node votes no until its quarantine is over. A node whose
// name comes from the server learns it again.
func (c *Client) noticeIdentity(n *node, a answer) {
	prev, changed := n.ident.observe(incarnation{server: a.server, created: a.created})
	if !changed {
		return
	}
	quarantine := time.Duration(a.ms) * time.Millisecond
	if a.vote != voteQuarantined {
		quarantine = 0
	}
	if prev.server != 0 && a.server != 0 && prev.server != a.server {
		const msg = "node is another server now (its run_id changed: a restart, a failover or a replaced server); it may have forgotten locks and votes no until its quarantine is over"
		if n.nm.fixed {
			c.log.Warn(msg, "node", n.name(), "run_id", runIDText(a.server), "previous_run_id", runIDText(prev.server), "quarantine", quarantine)
			return
		}
		// A node named by the server it reached (a Sentinel group's
		// client) is named by the new run_id at once, then learns the
		// new server's address before the line is logged; in the
		// background: it is one more round trip.
		before := n.name()
		n.nm.set("run_id:" + runIDText(a.server))
		c.wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), max(time.Second, c.cfg.NodeTimeout))
			defer cancel()
			n.learnName(ctx, a.server)
			c.log.Warn(msg, "node", n.name(), "previous_node", before, "run_id", runIDText(a.server), "previous_run_id", runIDText(prev.server), "quarantine", quarantine)
		})
		return
	}
	c.log.Warn("node has a new quarantine marker (its data was lost or replaced: FLUSHALL, a restart, a full resync); it may have forgotten locks and votes no until its quarantine is over",
		"node", n.name(), "run_id", runIDText(a.server), "quarantine", quarantine)
}

// logRaised logs at level, once per node and marker, that a quarantined
// node's fencing floor was raised.
func (c *Client) logRaised(n *node, created int64, level hclog.Level, msg string, args ...any) {
	if !n.ident.firstRaise(created) {
		return
	}
	c.log.Log(level, msg, append([]any{"node", n.name()}, args...)...)
}
