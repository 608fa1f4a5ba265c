package doctor

import (
	"fmt"
	"strconv"
	"strings"
)

// persistence checks appendonly, appendfsync and save against the
// quarantine (docs/design.md §3.2 item 7).
func persistence(cfg *Config, conf map[string]string) []Finding {
	const offFix = "set appendonly yes and appendfsync always, or turn the quarantine back on"
	aof, fsync, save := conf["appendonly"] == "yes", conf["appendfsync"], conf["save"]
	if !aof {
		what := "no persistence (appendonly no, save \"\")"
		if save != "" {
			what = fmt.Sprintf("RDB snapshots only (save %q), no AOF", save)
		}
		if cfg.DisableQuarantine {
			return []Finding{{ID: CheckPersistence, Severity: Fail, Found: what + " with the quarantine disabled",
				Risk: "a restart forgets the locks it granted and grants them again at once: two holders", Fix: offFix}}
		}
		return []Finding{{ID: CheckPersistence, Severity: Info, Found: what,
			Risk: fmt.Sprintf("a restart forgets its locks: the quarantine keeps the node from voting for MaxTTL (%s) after it", cfg.MaxTTL),
			Fix:  "none needed; appendonly yes with appendfsync always keeps the fencing counters across restarts"}}
	}
	out := []Finding{{ID: CheckPersistence, Severity: OK, Found: "AOF (appendonly yes)"}}
	if fsync == "always" {
		return append(out, Finding{ID: CheckAppendfsync, Severity: OK, Found: "appendfsync always"})
	}
	f := Finding{ID: CheckAppendfsync, Severity: Warn, Found: "appendfsync " + fsync,
		Risk: fmt.Sprintf("a crash loses the writes of the last %s, locks and fencing counters among them: only the quarantine covers it", fsyncWindow(fsync)),
		Fix:  "appendfsync always; where the service fixes it, keep the quarantine on and --accept appendfsync"}
	if cfg.DisableQuarantine {
		f.Severity, f.Risk, f.Fix = Fail, "a crash loses acknowledged locks and, with the quarantine disabled, grants them again: two holders", offFix
	}
	return append(out, f)
}

func fsyncWindow(fsync string) string {
	if fsync == "everysec" {
		return "second"
	}
	return "~30 seconds (the kernel's flush)"
}

// eviction checks maxmemory-policy (docs/design.md §3.2 item 3).
func eviction(conf map[string]string) Finding {
	p := conf["maxmemory-policy"]
	f := Finding{ID: CheckEviction, Found: fmt.Sprintf("maxmemory-policy %s (maxmemory %s)", p, conf["maxmemory"]),
		Fix: "CONFIG SET maxmemory-policy noeviction (and in redis.conf)"}
	switch {
	case p == "noeviction":
		f.Severity, f.Fix = OK, ""
	case strings.HasPrefix(p, "allkeys-"):
		f.Severity, f.Risk = Fail, "at maxmemory the server evicts any key, a held lock's among them: granted twice; redlock refuses this node"
	case strings.HasPrefix(p, "volatile-"):
		// A fail, not a warn: every lock key has a TTL, so volatile-* evicts
		// them as readily as allkeys-*, and New refuses the node alike.
		f.Severity, f.Risk = Fail, "at maxmemory the server evicts keys with a TTL, and every lock key has one: granted twice; redlock refuses this node"
	default:
		f.Severity, f.Risk = Warn, "a policy this version does not know: it may evict lock keys"
	}
	return f
}

// replicas checks a master's replicas against min-replicas-to-write.
func replicas(info, conf map[string]string, haveConf bool) Finding {
	n, _ := strconv.Atoi(info["connected_slaves"])
	if n == 0 {
		return Finding{ID: CheckReplicas, Severity: OK, Found: "no replicas"}
	}
	min := conf["min-replicas-to-write"]
	if haveConf && min != "0" {
		return Finding{ID: CheckReplicas, Severity: OK, Found: fmt.Sprintf("%d replicas, min-replicas-to-write %s", n, min)}
	}
	return Finding{ID: CheckReplicas, Severity: Warn, Found: fmt.Sprintf("%d replicas, min-replicas-to-write %s", n, orUnknown(min)),
		Risk: "replication is asynchronous: a failover can promote a replica without the latest lock copies (it is quarantined for MaxTTL, so the node's vote is lost meanwhile)",
		Fix:  "min-replicas-to-write 1 with min-replicas-max-lag, so the master refuses writes no replica receives; or --accept replicas"}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// role fails a replica given as a node.
func role(info map[string]string) Finding {
	r := info["role"]
	if r == "master" {
		return Finding{ID: CheckRole, Severity: OK, Found: "master"}
	}
	return Finding{ID: CheckRole, Severity: Fail, Found: fmt.Sprintf("role %s (of %s:%s)", orUnknown(r), info["master_host"], info["master_port"]),
		Risk: "a replica refuses lock writes (READONLY), or with replica-read-only no grants locks its master never sees",
		Fix:  "give the master, or a Sentinel group, as the node"}
}

// version reports the server and version; before 7.0, an error in a
// script is a generic ERR (docs/operations.md, supported servers).
func version(info map[string]string) Finding {
	v := info["redis_version"]
	major, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	f := Finding{ID: CheckVersion, Severity: Info, Found: serverName(info) + fmt.Sprintf(" (redis_version %s)", v)}
	if major < 7 {
		f.Severity = Warn
		f.Risk = "before Redis 7.0 a refusal inside a script is a generic ERR: a denied command is retried until the caller's context ends"
		f.Fix = "upgrade to Redis 7 or later, or Valkey"
	}
	return f
}

// distinct fails a node whose server (run_id) an earlier node already is:
// one server, two votes (S7).
func distinct(states []*nodeState) {
	seen := map[string]string{}
	for _, s := range states {
		if !s.report.Reachable {
			continue
		}
		f := Finding{ID: CheckDistinct, Severity: OK, Found: "run_id " + short(s.runID)}
		switch first, dup := seen[s.runID]; {
		case s.runID == "":
			f.Severity, f.Found = Warn, "run_id unknown (INFO refused)"
			f.Risk, f.Fix = "two nodes that are one server would cast two votes", "grant +info|server"
		case dup:
			f.Severity, f.Found = Fail, fmt.Sprintf("the same server as %s (run_id %s)", first, short(s.runID))
			f.Risk = "one server, two votes: a majority of nodes may be a minority of servers; redlock refuses the pair"
			f.Fix = "give each server once; two addresses of one server (a proxy, a VIP, a DNS name) count once"
		default:
			seen[s.runID] = s.report.Node
		}
		s.add(f)
	}
}

func short(runID string) string {
	if len(runID) > 12 {
		return runID[:12] + "..."
	}
	return runID
}
