package doctor

import (
	"context"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/clusterkey"
)

// Cluster is a Redis Cluster to check as redlock.NewCluster uses it: the
// cluster client, and the layout of its clients' locks (docs/design.md
// §4.11).
type Cluster struct {
	Client *redis.ClusterClient
	// Replicas is NewCluster's n, the copies of each lock (odd, 1 to 15;
	// 0: 3), and Buckets redlock.Config.Buckets (1 to 1024; 0: 16).
	Replicas, Buckets int
}

// withDefaults returns cl with its defaults, or an error naming a bad
// value.
func (cl Cluster) withDefaults() (Cluster, error) {
	if cl.Replicas == 0 {
		cl.Replicas = clusterkey.DefaultReplicas
	}
	if cl.Buckets == 0 {
		cl.Buckets = clusterkey.DefaultBuckets
	}
	switch {
	case cl.Client == nil:
		return cl, fmt.Errorf("%w: nil cluster client", ErrInvalidArgument)
	case cl.Replicas < 1 || cl.Replicas > 15 || cl.Replicas%2 == 0:
		return cl, fmt.Errorf("%w: Replicas (%d) must be odd, from 1 to 15", ErrInvalidArgument, cl.Replicas)
	case cl.Buckets < 1 || cl.Buckets > clusterkey.MaxBuckets:
		return cl, fmt.Errorf("%w: Buckets (%d) must be from 1 to %d", ErrInvalidArgument, cl.Buckets, clusterkey.MaxBuckets)
	}
	return cl, nil
}

// RunCluster checks a Redis Cluster: every master that serves a slot, as
// Run checks a node (the keys, the markers and the notice channel of the
// copies it serves, and cluster-require-full-coverage), and the cluster as
// a whole (Report.Cluster): whether the copies of each lock are on
// distinct masters (CheckPlacement) and the layout the cluster's clients
// recorded (CheckLayout). Its error is a bad Config or Cluster only; a
// cluster that does not answer CLUSTER SLOTS is a finding, with no nodes.
func RunCluster(ctx context.Context, cfg Config, cl Cluster) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cl, err = cl.withDefaults(); err != nil {
		return nil, err
	}
	//lint:ignore SA1019 CLUSTER SLOTS answers on every version, as in internal/placement
	slots, err := cl.Client.ClusterSlots(ctx).Result()
	if err != nil {
		return report(&cfg, nil, []Finding{{ID: CheckReachable, Severity: Fail, Found: "CLUSTER SLOTS: " + err.Error(),
			Risk: "the cluster's masters are not known: nothing checked",
			Fix:  "check the seed addresses, the network, the credentials (+cluster|slots) and that the cluster is up"}}), nil
	}
	p := newPlan(slots, cfg.Name, cl.Replicas, cl.Buckets)
	nodes, missing := p.nodes(ctx, cl.Client)
	states := append(checkAll(ctx, &cfg, nodes), missing...)
	want := clusterkey.Layout(cl.Replicas, cl.Buckets)
	return report(&cfg, states, []Finding{p.placement(), layout(ctx, cl.Client, states, want)}), nil
}

// nodes are the masters of p, each with the cluster client's own client
// of it and the scope of the copies it serves; missing are the masters
// the cluster client has no client of (its slot map is older than CLUSTER
// SLOTS), reported unreachable.
func (p *plan) nodes(ctx context.Context, cc *redis.ClusterClient) (nodes []Node, missing []*nodeState) {
	var mu sync.Mutex
	clients := map[string]*redis.Client{}
	_ = cc.ForEachMaster(ctx, func(_ context.Context, c *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		clients[c.Options().Addr] = c
		return nil
	})
	for _, m := range p.masters {
		c, ok := clients[m]
		if !ok {
			s := &nodeState{report: NodeReport{Node: m}}
			s.add(Finding{ID: CheckReachable, Severity: Fail, Found: "not in the cluster client's slot map, though CLUSTER SLOTS names it",
				Risk: "a master not checked", Fix: "rerun doctor once the cluster's topology settles"})
			missing = append(missing, s)
			continue
		}
		nodes = append(nodes, Node{Name: m, Client: c, scope: p.scope(m)})
	}
	return nodes, missing
}

// coverage checks a cluster master's cluster-require-full-coverage: with
// yes, every master answers CLUSTERDOWN while a failed one is replaced.
func coverage(ctx context.Context, c redis.UniversalClient) Finding {
	const param = "cluster-require-full-coverage"
	m, err := c.ConfigGet(ctx, param).Result()
	v, ok := m[param]
	switch {
	case err != nil || !ok:
		return Finding{ID: CheckCoverage, Severity: Warn, Found: fmt.Sprintf("CONFIG GET %s refused or unknown: %v", param, err),
			Risk: "not checked: with yes, one failed master stops every lock until it is replaced",
			Fix:  "set cluster-require-full-coverage no in the service's settings, then --accept coverage"}
	case v == "yes":
		return Finding{ID: CheckCoverage, Severity: Warn, Found: param + " yes",
			Risk: "while a failed master is being replaced every master answers CLUSTERDOWN: one failure stops every lock instead of costing one vote",
			Fix:  "CONFIG SET cluster-require-full-coverage no (and in redis.conf); where the service fixes it, --accept coverage"}
	}
	return Finding{ID: CheckCoverage, Severity: OK, Found: param + " " + v}
}

// layout checks the layout the cluster's clients recorded (the key
// clusterkey.LayoutKey, and each marker's) against want.
func layout(ctx context.Context, cc *redis.ClusterClient, states []*nodeState, want string) Finding {
	f := Finding{ID: CheckLayout, Severity: OK}
	const fix = "run every client with the recorded layout (--replicas n; redlock.Config.Buckets B), or stop every client and delete %s (and the markers) to change it"
	rec, err := cc.Get(ctx, clusterkey.LayoutKey).Result()
	var other []string
	for _, s := range states {
		for _, m := range s.markers {
			if m.exists && m.layout != "" && m.layout != want {
				other = append(other, fmt.Sprintf("%s has %s", m.key, m.layout))
			}
		}
	}
	switch {
	case err != nil && err != redis.Nil:
		f.Severity, f.Found = Warn, fmt.Sprintf("GET %s failed: %v", clusterkey.LayoutKey, err)
		f.Risk, f.Fix = "the layout of the cluster's clients not checked", "grant +get on ~{rl*}:marker"
	case rec != "" && rec != want:
		f.Severity, f.Found = Fail, fmt.Sprintf("the cluster's clients recorded %s in %s; this run's is %s", rec, clusterkey.LayoutKey, want)
		f.Risk = "redlock.NewCluster refuses a client of this layout: two layouts keep a lock in different slots, and could grant it twice"
		f.Fix = fmt.Sprintf(fix, clusterkey.LayoutKey)
	case len(other) > 0:
		f.Severity, f.Found = Fail, fmt.Sprintf("this run's layout is %s, but %d markers record another (%s)", want, len(other), other[0])
		f.Risk = "the scripts refuse this client on those copies, with an error naming both layouts"
		f.Fix = fmt.Sprintf(fix, clusterkey.LayoutKey)
	case rec == "":
		f.Found = fmt.Sprintf("no layout recorded yet: the first client records %s in %s", want, clusterkey.LayoutKey)
	default:
		f.Found = fmt.Sprintf("the cluster's clients use %s, as this run (%s)", want, clusterkey.LayoutKey)
	}
	return f
}
