package doctor

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"
)

// sentinelView is what one sentinel said of a group: the master it names
// ("" with err), the group's flags, and its CKQUORUM answer (quorumErr:
// no quorum or no majority of usable sentinels).
type sentinelView struct {
	addr, master, flags, quorum string
	quorumErr, err              error
}

// askSentinel asks the sentinel at addr about the group fo.MasterName,
// with the credentials and TLS fo gives the sentinels.
func askSentinel(ctx context.Context, cfg *Config, fo *redis.FailoverOptions, addr string) sentinelView {
	v := sentinelView{addr: addr}
	sc := redis.NewSentinelClient(&redis.Options{Addr: addr, Username: fo.SentinelUsername, Password: fo.SentinelPassword,
		TLSConfig: fo.TLSConfig, MaxRetries: -1, DialTimeout: cfg.NodeTimeout * 4, ReadTimeout: cfg.NodeTimeout * 4})
	defer sc.Close()
	ctx, cancel := context.WithTimeout(ctx, cfg.NodeTimeout*8)
	defer cancel()
	hp, err := sc.GetMasterAddrByName(ctx, fo.MasterName).Result()
	if err != nil {
		v.err = err
		return v
	}
	if len(hp) == 2 {
		v.master = net.JoinHostPort(hp[0], hp[1])
	}
	m, err := sc.Master(ctx, fo.MasterName).Result()
	if err != nil {
		v.err = err
		return v
	}
	v.flags = m["flags"]
	v.quorum, v.quorumErr = sc.CkQuorum(ctx, fo.MasterName).Result()
	return v
}

// sentinel checks a Sentinel group (a node made by redis.NewFailoverClient,
// Node.Sentinel): its sentinels answer, name one master, see it up, and
// can order a failover (SENTINEL CKQUORUM: the quorum and a majority of
// the group's sentinels are usable). A failover that cannot happen costs
// a vote while the master is down; a split view of the master costs
// nothing to safety (each group is one vote, and the quarantine covers a
// switch of master: docs/design.md §4.7) but is worth an operator's look.
func sentinel(ctx context.Context, cfg *Config, fo *redis.FailoverOptions) Finding {
	f := Finding{ID: CheckSentinel, Severity: Warn,
		Fix: "check the sentinels' addresses, their credentials (the URL's user:password@) and network, and SENTINEL CKQUORUM " + fo.MasterName}
	noFailover := "no failover of this group can be ordered: a master that dies stays a lost vote"
	var answered []sentinelView
	var failed []string
	for _, addr := range fo.SentinelAddrs {
		v := askSentinel(ctx, cfg, fo, addr)
		if v.err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", addr, v.err))
			continue
		}
		answered = append(answered, v)
	}
	if len(answered) == 0 {
		f.Found = fmt.Sprintf("none of %d sentinels answered about group %s: %s", len(fo.SentinelAddrs), fo.MasterName, strings.Join(failed, "; "))
		f.Risk = noFailover
		return f
	}
	masters := map[string][]string{}
	for _, v := range answered {
		masters[v.master] = append(masters[v.master], v.addr)
	}
	quorumOK := slices.IndexFunc(answered, func(v sentinelView) bool { return v.quorumErr == nil })
	switch {
	case len(masters) > 1:
		var views []string
		for m, by := range masters {
			views = append(views, fmt.Sprintf("%s by %s", m, strings.Join(by, ",")))
		}
		slices.Sort(views)
		f.Found = "the sentinels name different masters: " + strings.Join(views, "; ")
		f.Risk = "a failover under way, or sentinels cut from each other: clients may follow different servers (each group is still one vote, quarantined after a switch)"
	case slices.ContainsFunc(answered, func(v sentinelView) bool {
		return strings.Contains(v.flags, "s_down") || strings.Contains(v.flags, "o_down")
	}):
		f.Found = fmt.Sprintf("sentinels see the master %s down", answered[0].master)
		f.Risk = "the group does not vote until a replica is promoted"
	case quorumOK < 0:
		f.Found = fmt.Sprintf("%d of %d sentinels answered, naming the master %s, and none can order a failover: %v",
			len(answered), len(fo.SentinelAddrs), answered[0].master, answered[0].quorumErr)
		f.Risk = noFailover
	default:
		f = Finding{ID: CheckSentinel, Severity: OK, Found: fmt.Sprintf("%d of %d sentinels answered, all naming the master %s; %s",
			len(answered), len(fo.SentinelAddrs), answered[0].master, answered[quorumOK].quorum)}
	}
	return f
}
