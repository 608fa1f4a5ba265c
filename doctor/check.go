package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/rediserr"
)

// nodeState is one node's report and what the checks across nodes need.
type nodeState struct {
	report  NodeReport
	runID   string   // INFO server's run_id; "" when unknown
	markers []marker // as read; nil when not read
}

func (s *nodeState) add(fs ...Finding) { s.report.Findings = append(s.report.Findings, fs...) }

// check runs every check of one node.
func check(ctx context.Context, cfg *Config, n Node) *nodeState {
	s := &nodeState{report: NodeReport{Node: n.Name}}
	if err := n.Client.Ping(ctx).Err(); err != nil {
		s.add(Finding{ID: CheckReachable, Severity: Fail, Found: "no answer: " + err.Error(),
			Risk: "the node cannot vote: the majority has one fault fewer to spare",
			Fix:  "check the address, the network, the credentials and that the server runs"})
		if n.Sentinel != nil {
			s.add(sentinel(ctx, cfg, n.Sentinel))
		}
		return s
	}
	s.report.Reachable = true
	s.add(Finding{ID: CheckReachable, Severity: OK, Found: "answers PING"})
	if n.Sentinel != nil {
		s.add(sentinel(ctx, cfg, n.Sentinel))
	}
	info, infoErr := readInfo(ctx, n.Client)
	s.runID = info["run_id"]
	s.report.Server = serverName(info)
	conf, confErr := readConf(ctx, n.Client)
	if confErr != nil {
		s.add(configFinding(confErr))
	} else {
		s.add(persistence(cfg, conf)...)
		s.add(eviction(conf))
	}
	if infoErr != nil {
		s.add(Finding{ID: CheckRole, Severity: Warn, Found: "INFO refused: " + infoErr.Error(),
			Risk: "role, replicas, version and one server, one vote not checked; the scripts need INFO too",
			Fix:  "grant +info|server and +info|replication"})
	} else {
		s.add(replicas(info, conf, confErr == nil), role(info), version(info))
	}
	s.add(scripting(ctx, n.Client), acl(ctx, cfg, n.scope, n.Client))
	fs, ms := markers(ctx, cfg, n.scope, n.Client, info)
	s.add(fs...)
	s.markers = ms
	if n.scope.cluster {
		s.add(coverage(ctx, n.Client))
	}
	s.add(clock(ctx, cfg, n.Client)...)
	s.add(latency(ctx, cfg, n.Client))
	return s
}

// readInfo reads INFO server and INFO replication (one section a call:
// servers before Redis 7 take one).
func readInfo(ctx context.Context, c redis.UniversalClient) (map[string]string, error) {
	out := map[string]string{}
	for _, section := range []string{"server", "replication"} {
		text, err := c.Info(ctx, section).Result()
		if err != nil {
			return out, err
		}
		for line := range strings.SplitSeq(text, "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
				out[k] = v
			}
		}
	}
	return out, nil
}

// serverName is "redis 7.0.15" or "valkey 8.0.1"; "" when unknown.
func serverName(info map[string]string) string {
	if v := info["valkey_version"]; v != "" {
		return "valkey " + v
	}
	if v := info["redis_version"]; v != "" {
		return "redis " + v
	}
	return ""
}

// confParams are the settings the checks read.
var confParams = []string{"appendonly", "appendfsync", "save", "maxmemory-policy", "maxmemory", "min-replicas-to-write"}

// readConf reads confParams, one CONFIG GET each (several names in one
// call need Redis 7).
func readConf(ctx context.Context, c redis.UniversalClient) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range confParams {
		m, err := c.ConfigGet(ctx, p).Result()
		if err != nil {
			return nil, err
		}
		v, ok := m[p]
		if !ok {
			return nil, fmt.Errorf("CONFIG GET %s: no such setting", p)
		}
		out[p] = v
	}
	return out, nil
}

// configFinding is the finding of a CONFIG GET that failed.
func configFinding(err error) Finding {
	why := "failed"
	if c, ok := rediserr.Of(err); ok && (c == rediserr.Permission || c == rediserr.Unsupported) {
		why = "refused or renamed (as managed services do)"
	}
	return Finding{ID: CheckConfig, Severity: Warn, Found: "CONFIG GET " + why + ": " + err.Error(),
		Risk: "persistence, maxmemory-policy and min-replicas-to-write not checked: an evicting policy would grant a lock twice",
		Fix:  "check them in the service's settings (maxmemory-policy noeviction), or run doctor as a user allowed CONFIG GET; --accept config"}
}
