// Package doctor checks the Redis servers redlease runs on against what
// it assumes of them (docs/design.md §3.2): persistence against the
// quarantine, no eviction of lock keys, one master per node and one vote
// per server, the scripting features and ACL permissions the library
// uses, a server clock that runs at the client's rate, round trips that
// leave a TTL room, and what the quarantine markers recorded; on a Redis
// Cluster ([RunCluster]) also the copies of each lock on distinct masters.
// `redlease doctor` prints its [Report].
//
// It reads and tries, it does not guess: settings come from CONFIG GET and
// INFO, permissions from ACL DRYRUN (or, where DRYRUN is refused, from
// running the commands on a scratch key), clocks from TIME. It writes only
// scratch keys under the checked name, which expire within a second, and
// never a quarantine marker (it reads them), so it starts no quarantine.
//
// It imports go-redis and internal helpers only: the settings of the
// redlock client it checks for come in as plain values ([Config]).
package doctor

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Severity ranks a finding; a [Report]'s exit code is its worst.
type Severity int

// The severities, from best to worst.
const (
	OK   Severity = iota // as redlease needs it
	Info                 // worth knowing, no risk to safety
	Warn                 // a risk under a fault, or a check that could not be made
	Fail                 // breaks an assumption of the safety model
)

var severityNames = [...]string{"ok", "info", "warn", "fail"}

// String is the severity's name: ok, info, warn or fail.
func (s Severity) String() string {
	if s < OK || s > Fail {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// MarshalText writes the severity's name (JSON).
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a severity's name.
func (s *Severity) UnmarshalText(b []byte) error {
	i := slices.Index(severityNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("doctor: unknown severity %q", b)
	}
	*s = Severity(i)
	return nil
}

// Finding is one check's result on one node.
type Finding struct {
	ID       string   `json:"id"`             // the check (see the Check constants); what --accept names
	Severity Severity `json:"severity"`       // after Config.Accept
	Found    string   `json:"found"`          // what the check saw
	Risk     string   `json:"risk,omitempty"` // what it risks, one line ("" when ok)
	Fix      string   `json:"fix,omitempty"`  // how to fix it ("" when ok)
	// Accepted: the user lowered the finding to info (Config.Accept);
	// Original is its severity before.
	Accepted bool      `json:"accepted,omitempty"`
	Original *Severity `json:"original,omitempty"`
}

// NodeReport is every finding on one node, in the order of the checks.
type NodeReport struct {
	Node      string    `json:"node"`
	Server    string    `json:"server,omitempty"` // "redis 7.0.15", "valkey 8.0.1"
	Reachable bool      `json:"reachable"`
	Findings  []Finding `json:"findings"`
}

// Report is the result of [Run] and [RunCluster].
type Report struct {
	Nodes []NodeReport `json:"nodes"`
	// Cluster is the findings of RunCluster on the cluster as a whole
	// (placement, layout); none from Run.
	Cluster []Finding `json:"cluster,omitempty"`
	Worst   Severity  `json:"worst"` // the worst severity of any finding
}

// Reachable counts the nodes that answered.
func (r *Report) Reachable() int {
	n := 0
	for _, nr := range r.Nodes {
		if nr.Reachable {
			n++
		}
	}
	return n
}

// Node is one node to check: a name for the report and its client (a
// go-redis client of one standalone server).
type Node struct {
	Name   string
	Client redis.UniversalClient
	// Sentinel, for a Client made by redis.NewFailoverClient, is its
	// FailoverOptions: the group's sentinels are asked who the master is
	// (check "sentinel"). Nil for a server.
	Sentinel *redis.FailoverOptions
	scope    scope // where redlease keeps its keys there (RunCluster's); zero: a standalone node
}

// Run checks every node, at once, and the nodes against each other. Its
// error is a bad Config only (wrapping [ErrInvalidArgument]); a node that
// does not answer is a finding. It takes about Config.ClockInterval plus
// Config.Pings round trips.
func Run(ctx context.Context, cfg Config, nodes []Node) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%w: no nodes", ErrInvalidArgument)
	}
	states := checkAll(ctx, &cfg, nodes)
	return report(&cfg, states, nil), nil
}

// checkAll checks every node at once, then the nodes against each other.
func checkAll(ctx context.Context, cfg *Config, nodes []Node) []*nodeState {
	states := make([]*nodeState, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { states[i] = check(ctx, cfg, n) })
	}
	wg.Wait()
	distinct(states)
	return states
}

// report is the Report of the nodes' states and the findings on the
// cluster as a whole, after cfg.Accept.
func report(cfg *Config, states []*nodeState, cluster []Finding) *Report {
	rep := &Report{Cluster: cluster}
	cfg.accept(rep.Cluster)
	for _, f := range rep.Cluster {
		rep.Worst = max(rep.Worst, f.Severity)
	}
	for _, s := range states {
		cfg.accept(s.report.Findings)
		rep.Nodes = append(rep.Nodes, s.report)
		for _, f := range s.report.Findings {
			rep.Worst = max(rep.Worst, f.Severity)
		}
	}
	return rep
}
