package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/doctor"
)

// The exit codes of doctor, its own: the worst finding.
const (
	exitDoctorWarn  = 1 // a warning
	exitDoctorFail  = 2 // a failure
	exitDoctorUsage = 3 // a usage error, or no node answered
)

const doctorUsage = `Usage: redlease doctor [--json] [--accept ID,...] [--ttl 10s] [--name NAME] [node flags]

Checks every node against what redlease assumes of it and prints, per
node, each finding with its severity (ok, info, warn, fail), what it risks
and how to fix it:

  reachable     the node answers
  sentinel      for a Sentinel group given as a node (a URL with master_name=,
                see --nodes): its sentinels answer, name one master, see it
                up and can order a failover (SENTINEL CKQUORUM)
  config        CONFIG GET is allowed (else the next three are not checked)
  persistence   appendonly and save against the quarantine
  appendfsync   everysec or no: a crash loses the last writes
  eviction      maxmemory-policy: fail on allkeys-*, warn on volatile-*
  replicas      a master with replicas and min-replicas-to-write 0
  role          a replica given as a node (fail)
  distinct      two nodes that are one server, by run_id (fail)
  version       server and version (warn before Redis 7)
  scripting     EVAL runs; FUNCTION reported
  acl           every command redlease sends, on NAME's keys and channel and
                the marker, tried with ACL DRYRUN (or sent, where DRYRUN is
                refused); each denied command is named
  clock-offset  the server's time of day against this host's (warn > 1s)
  clock-rate    the server's clock against this host's monotonic clock over
                --clock-interval (fail beyond the drift allowance, 1%)
  latency       PING p50/p99 over --pings against --node-timeout and --ttl
  marker        the quarantine marker, read: none yet, written by another
                server process or dataset (a restart, a failover), in
                quarantine (info), or voting (ok)
  max-ttl       the MaxTTL the markers record against --max-ttl (warn if
                another: clients with different MaxTTLs share the node)

With --cluster, the nodes are seeds: every master that serves a slot is
checked on the keys and markers of the copies it serves (--replicas
copies in 16 buckets), with

  coverage      cluster-require-full-coverage yes (warn: one failed master
                stops every lock until it is replaced)

and the cluster as a whole:

  placement     the copies of each bucket on distinct masters (fail when
                two share one; warn with fewer masters than copies)
  layout        the layout the cluster's clients recorded against
                --replicas (fail if another)

It writes only scratch keys NAME:doctor-scratch* (when ACL DRYRUN is
refused; they expire within a second), never a quarantine marker nor the
cluster's layout. With --accept, the named findings (config, appendfsync,
replicas, version, clock-offset, latency, coverage, sentinel) are lowered to info:
settings a managed service will not let you change.

Exits 0 when every finding is ok or info, 1 with a warning, 2 with a
failure, 3 on a usage error or when no node answered.`

// doctorFlags are doctor's own flags.
type doctorFlags struct {
	asJSON        bool
	accept        string
	ttl           time.Duration
	name          string
	aclUser       string
	pings         int
	clockInterval time.Duration
}

func cmdDoctor(ctx context.Context, args []string, out *outputs) int {
	c := newCommand("doctor", doctorUsage, out)
	var f doctorFlags
	c.fs.BoolVar(&f.asJSON, "json", false, "print the report as one JSON object")
	c.fs.StringVar(&f.accept, "accept", "", "comma-separated finding `IDs` to lower to info ("+strings.Join(doctor.Acceptable, ", ")+")")
	c.fs.DurationVar(&f.ttl, "ttl", 10*time.Second, "the lock or lease TTL whose budget the round trips are checked against")
	c.fs.StringVar(&f.name, "name", "redlease-doctor", "an election `name` whose keys and channel the ACL must allow")
	c.fs.StringVar(&f.aclUser, "acl-user", "", "the ACL `user` to check (ACL DRYRUN); default: the nodes' own")
	c.fs.IntVar(&f.pings, "pings", 20, "PINGs per node for the round-trip percentiles")
	c.fs.DurationVar(&f.clockInterval, "clock-interval", 2*time.Second, "time between the two clock samples of the rate check")
	if code := c.parse(args); code >= 0 {
		return doctorCode(code)
	}
	cfg, err := f.config(c)
	if err != nil {
		return doctorCode(c.fail(err))
	}
	set, err := c.nodeSet()
	if err != nil {
		return doctorCode(c.fail(err))
	}
	rep, err := runDoctor(ctx, cfg, &c.conn, set)
	if err != nil {
		return doctorCode(c.fail(usagef("%v", err)))
	}
	if f.asJSON {
		enc := json.NewEncoder(out.out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	} else {
		printDoctor(out.out, rep)
	}
	return doctorExit(rep)
}

// runDoctor checks the nodes of set: independent nodes, or with
// --cluster the cluster they are seeds of.
func runDoctor(ctx context.Context, cfg doctor.Config, conn *connFlags, set *nodeSet) (*doctor.Report, error) {
	if conn.cluster {
		cc := redis.NewClusterClient(set.clusterOptions())
		defer cc.Close()
		return doctor.RunCluster(ctx, cfg, doctor.Cluster{Client: cc, Replicas: conn.replicas})
	}
	nodes := make([]doctor.Node, len(set.specs))
	for i, s := range set.specs {
		rc := s.client()
		defer rc.Close()
		nodes[i] = doctor.Node{Name: s.name(), Client: rc, Sentinel: s.sentinel}
	}
	return doctor.Run(ctx, cfg, nodes)
}

// config checks the flags and makes the checks' configuration.
func (f *doctorFlags) config(c *command) (doctor.Config, error) {
	cfg := doctor.Config{NodeTimeout: c.conn.nodeTimeout, MaxTTL: c.conn.maxTTL, TTL: f.ttl, Name: f.name,
		ACLUser: f.aclUser, Pings: f.pings, ClockInterval: f.clockInterval}
	for id := range strings.SplitSeq(f.accept, ",") {
		if id = strings.TrimSpace(id); id != "" {
			cfg.Accept = append(cfg.Accept, id)
		}
	}
	switch {
	case c.conn.bootstrap:
		return cfg, usagef("--bootstrap: doctor writes nothing; run 'redlease bootstrap'")
	case f.ttl <= 0 || f.pings < 1 || f.clockInterval <= 0 || f.name == "":
		return cfg, usagef("--ttl (%s), --pings (%d) and --clock-interval (%s) must be positive, --name not empty", f.ttl, f.pings, f.clockInterval)
	}
	if err := noArgs(c.fs); err != nil {
		return cfg, err
	}
	if err := doctor.CheckAccept(cfg.Accept); err != nil {
		return cfg, usagef("--accept: %v", err)
	}
	return cfg, nil
}

// doctorCode maps the exit code of a command's parse or fail to doctor's.
func doctorCode(code int) int {
	if code == exitUsage || code == exitError {
		return exitDoctorUsage
	}
	return code
}

// doctorExit is the report's exit code.
func doctorExit(rep *doctor.Report) int {
	switch {
	case rep.Reachable() == 0:
		return exitDoctorUsage
	case rep.Worst == doctor.Fail:
		return exitDoctorFail
	case rep.Worst == doctor.Warn:
		return exitDoctorWarn
	}
	return exitOK
}

// printDoctor prints the report: per node a line, a row per finding, and
// the risk and fix under each warning and failure; then those on the
// cluster as a whole, and the verdict.
func printDoctor(w io.Writer, rep *doctor.Report) {
	for _, n := range rep.Nodes {
		fmt.Fprintf(w, "%s", n.Node)
		if n.Server != "" {
			fmt.Fprintf(w, " (%s)", n.Server)
		}
		fmt.Fprintln(w)
		printFindings(w, n.Findings)
	}
	if len(rep.Cluster) > 0 {
		fmt.Fprintln(w, "cluster")
		printFindings(w, rep.Cluster)
	}
	fmt.Fprintf(w, "worst: %s; %d of %d nodes answered (exit %d)\n", rep.Worst, rep.Reachable(), len(rep.Nodes), doctorExit(rep))
}

// printFindings prints a row per finding, with the risk and the fix under
// each one that has them.
func printFindings(w io.Writer, fs []doctor.Finding) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, f := range fs {
		sev := f.Severity.String()
		if f.Accepted {
			sev += " (accepted " + f.Original.String() + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", sev, f.ID, f.Found)
		if f.Risk != "" {
			fmt.Fprintf(tw, "  \t\trisk: %s\n  \t\tfix: %s\n", f.Risk, f.Fix)
		}
	}
	_ = tw.Flush()
}
