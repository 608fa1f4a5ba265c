package doctor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// markers reads the node's markers and reports what they say of its vote
// (CheckMarker) and the MaxTTL they record (CheckMaxTTL). It returns the
// markers read, for the checks across nodes (the cluster layout).
func markers(ctx context.Context, cfg *Config, sc scope, c redis.UniversalClient, info map[string]string) ([]Finding, []marker) {
	keys := sc.allMarkers()
	if len(keys) == 0 {
		return []Finding{{ID: CheckMarker, Severity: Info, Found: "no copy of the locks on this master: redlease keeps no marker here"}}, nil
	}
	now, ms, err := readMarkers(ctx, c, keys)
	if err != nil {
		f := Finding{ID: CheckMarker, Severity: Warn, Found: "markers not read: " + err.Error(),
			Risk: "the node's quarantine and the MaxTTL its markers record are not checked",
			Fix:  "grant +hmget and +time on ~" + keys[0]}
		return []Finding{f}, nil
	}
	return []Finding{markerFinding(cfg, ms, info, now), maxTTLFinding(cfg, ms)}, ms
}

// markerFinding reports the worst state of the node's markers: the one
// that keeps its vote (or a copy's) longest.
func markerFinding(cfg *Config, ms []marker, info map[string]string, now time.Time) Finding {
	counts := map[markerState]int{}
	worst, at, left := markerReady, 0, time.Duration(0)
	for i, m := range ms {
		st, l := m.state(info["run_id"], info["master_replid"], now, cfg.MaxTTL)
		counts[st]++
		if st > worst || (st == worst && l > left) {
			worst, at, left = st, i, l
		}
	}
	f := stateFinding(cfg, worst, ms[at], info, left, now.Sub(ms[at].created).Round(time.Second))
	if len(ms) > 1 {
		f.Found = fmt.Sprintf("%d markers (%s); %s: %s", len(ms), countText(counts), ms[at].key, f.Found)
	}
	if cfg.DisableQuarantine {
		f.Severity, f.Risk, f.Fix = OK, "", ""
		f.Found = "quarantine disabled: the marker keeps the highest token only; " + f.Found
	}
	return f
}

var stateNames = map[markerState]string{markerReady: "vote", markerUnraised: "floor not raised",
	markerQuarantined: "in quarantine", markerMissing: "missing", markerReplaced: "another dataset", markerForeign: "another server"}

func countText(counts map[markerState]int) string {
	var parts []string
	for st := markerReady; st <= markerForeign; st++ {
		if counts[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[st], stateNames[st]))
		}
	}
	return strings.Join(parts, ", ")
}

// stateFinding describes one marker's state.
// (age: how long ago it was written, by the server's clock).
func stateFinding(cfg *Config, st markerState, m marker, info map[string]string, left, age time.Duration) Finding {
	const waitFix = "none needed: the quarantine keeps a node that may have forgotten locks from granting them again"
	quarantine := fmt.Sprintf("the next client to meet it quarantines it for MaxTTL (%s): it votes no until then", cfg.MaxTTL)
	f := Finding{ID: CheckMarker, Severity: Info}
	switch st {
	case markerMissing:
		f.Found = "no marker: redlease has not used this node, or it lost its data (a restart without persistence, FLUSHALL)"
		f.Risk, f.Fix = quarantine, "none needed; on a brand-new deployment, 'redlease bootstrap' lets the nodes vote at once (never after a crash)"
	case markerForeign:
		f.Found = fmt.Sprintf("marker written by another server process (run_id %s, now %s): a restart, a failover or another server since redlease last used it",
			short(m.runID), short(info["run_id"]))
		f.Risk, f.Fix = quarantine, waitFix
	case markerReplaced:
		f.Found = fmt.Sprintf("marker of another dataset (replication ID %s, now %s): a promotion or a full resync since redlease last used it",
			short(m.replID), short(info["master_replid"]))
		f.Risk, f.Fix = quarantine, waitFix
	case markerQuarantined:
		f.Found = fmt.Sprintf("in quarantine: %s left (marker written %s ago)", left.Round(time.Millisecond), age)
		f.Risk, f.Fix = "the node votes no until its quarantine is over", waitFix
	case markerUnraised:
		f.Found = "quarantine over, fencing floor not raised yet: it votes once a client's next call raises it"
	default:
		f.Severity, f.Found = OK, fmt.Sprintf("marker of this server (run_id %s, written %s ago): it votes", short(m.runID), age)
	}
	return f
}

// maxTTLFinding compares the MaxTTL the markers record with cfg.MaxTTL:
// a marker's MaxTTL is its node's quarantine and the longest TTL it
// grants, whatever the client's (docs/design.md §4.7.1, §4.8).
func maxTTLFinding(cfg *Config, ms []marker) Finding {
	var other []time.Duration
	recorded := 0
	for _, m := range ms {
		if m.exists && m.maxTTL != 0 {
			recorded++
			if m.maxTTL != cfg.MaxTTL && !slices.Contains(other, m.maxTTL) {
				other = append(other, m.maxTTL)
			}
		}
	}
	f := Finding{ID: CheckMaxTTL, Severity: OK}
	switch {
	case recorded == 0:
		f.Found = fmt.Sprintf("no marker records a MaxTTL: the first client to meet the node records its own (this run's --max-ttl: %s)", cfg.MaxTTL)
		return f
	case len(other) == 0:
		f.Found = fmt.Sprintf("the markers record MaxTTL %s, this run's", cfg.MaxTTL)
		return f
	}
	slices.Sort(other)
	f.Severity = Warn
	f.Found = fmt.Sprintf("a marker records MaxTTL %s, this run's is %s", durations(other), cfg.MaxTTL)
	f.Risk = "clients with different MaxTTLs share the node: after a restart the first client to meet it sets the quarantine to its own MaxTTL, which can end before a longer lock granted there expires: two holders"
	if other[0] < cfg.MaxTTL {
		f.Risk += fmt.Sprintf("; and the node refuses TTLs above %s", other[0])
	}
	f.Fix = "give every client of these nodes the same MaxTTL (--max-ttl, redlock.Config.MaxTTL); if this run's --max-ttl is not your clients', rerun doctor with theirs"
	return f
}

func durations(ds []time.Duration) string {
	var s []string
	for _, d := range ds {
		s = append(s, d.String())
	}
	return strings.Join(s, " and ")
}
