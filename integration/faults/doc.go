// Package faults holds the fault-injection tests of redlease's election
// against real redis-server processes: candidates run as child processes
// (internal/candidate, built by the tests), each reaching every node
// through a fault proxy of its own, so that links can be slowed, cut,
// reset or partitioned per client-node pair, servers can be paused, killed
// and restarted empty or from an old snapshot, nodes can be Sentinel groups
// (redis-sentinel processes; candidates reach them through go-redis
// FailoverClients, without proxies) that fail over, or one Redis Cluster
// of 3 masters with a replica each (candidates run redlock.NewCluster, their
// go-redis ClusterClients dialing every server through their own proxy for
// it; see cluster_test.go) whose masters are killed and failed over, cut
// off, or lose a majority (CLUSTERDOWN), and whose slots migrate, and
// candidates can be paused (SIGSTOP) and killed for real. Candidates report their terms on
// CLOCK_MONOTONIC, which every process of the host shares, and checkers
// test the history:
//
//   - C1: leadership tenures never overlap, and IsLeader is never true
//     outside its own tenure (nor past the term's validity);
//   - C2: fencing tokens strictly increase from tenure to tenure;
//   - C3: a fenced store that refuses stale tokens loses no update of the
//     read-modify-writes the leaders make;
//   - C4: every holder sees its term end before the term's validity ends
//     (20ms of scheduling slack); failover times are recorded.
//
// Each checker has a negative control that must make it fail. See
// faults_test.go for the scenarios. REDLEASE_FAULTS_SEED replays a run's
// choices, REDLEASE_SOAK lengthens the soak (`make soak`),
// REDLEASE_SOAK_CLUSTER=1 adds the soak on a Redis Cluster
// (`make soak CLUSTER=1`), and
// REDLEASE_FAULTS_REPORT=<file> writes the run's "faults survived" table
// (markdown) there; the table is in the test log too. Scenarios run two at
// a time, each on servers of its own; REDLEASE_FAULTS_PARALLEL=<n> sets
// how many (1: one after the other). It has no API.
//
// docs/design.md §7 describes the suites and how C1-C4 check the
// invariants of §2 (C1: S1 and S2; C2: S5; C4: S2).
package faults
