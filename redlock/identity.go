package redlock

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/quarantine"
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
// on (see [node.LearnName]), and duplicates are found by run_id.
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

// LearnName asks the server which address this node's connection reached
// (CLIENT INFO laddr) and names the node by it. It asks INFO server on the
// same connection (one pipeline), and takes the address only from the
// server whose run_id begins as want (see serverID; the server an answer
// just showed; 0 takes any server): a client that follows a failover may
// still hold connections to the previous server for a moment, so it asks
// again until ctx ends. Where CLIENT or INFO is refused, or no answer comes
// from that server, the node is named by want's run_id. Nodes named by
// their options keep their name.
func (n *node) LearnName(ctx context.Context, want int64) {
	if n.nm.fixed {
		return
	}
	where := ""
	if want != 0 {
		where = "run_id:" + quarantine.RunIDText(want)
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
// whose run_id is not the one asked for is not an error: LearnName asks again.
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

// A node is what the quarantine guard raises and names (quarantine.Node).
var _ quarantine.Node = (*node)(nil)

// Name is n.name(), for the quarantine guard.
func (n *node) Name() string { return n.name() }

// Identity is what n's answers said about its server.
func (n *node) Identity() *quarantine.Identity { return &n.ident }

// NamedByServer reports whether n is named by the server it reached (a
// Sentinel group's client, see configuredName).
func (n *node) NamedByServer() bool { return !n.nm.fixed }

// Rename names n by a server's run_id until LearnName finds its address.
func (n *node) Rename(server int64) { n.nm.set("run_id:" + quarantine.RunIDText(server)) }
