package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/doctor"
	"github.com/redlease/redlease/internal/testing/redistest"
)

// fastDoctor are doctor's flags for short samples, and a --node-timeout
// far above a loaded machine's round trips.
var fastDoctor = []string{"doctor", "--pings", "3", "--clock-interval", "100ms", "--node-timeout", "2s"}

func doctorCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runCLI(t, append(append([]string{}, fastDoctor...), args...)...)
}

// doctorJSON runs doctor --json and decodes its report.
func doctorJSON(t *testing.T, args ...string) (int, *doctor.Report) {
	t.Helper()
	code, stdout, stderr := doctorCLI(t, append(args, "--json")...)
	var rep doctor.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	return code, &rep
}

// nodeFinding returns the finding id of the report's first node.
func nodeFinding(t *testing.T, rep *doctor.Report, id string) doctor.Finding {
	t.Helper()
	for _, f := range rep.Nodes[0].Findings {
		if f.ID == id {
			return f
		}
	}
	t.Fatalf("no %s finding in %+v", id, rep.Nodes[0].Findings)
	return doctor.Finding{}
}

// doctor's exit code is its worst finding: 0 for ok and info, 1 for a
// warning (0 once it is accepted), 2 for a failure; its JSON is the
// report; the table shows the risk and fix of a warning.
func TestDoctorCLI(t *testing.T) {
	s := redistest.Start(t, 1, redistest.Options{Persistence: redistest.PersistAOF}).Server(0)
	c := s.Client(t)
	ctx := context.Background()
	nodes := "--nodes=" + s.Addr()

	code, rep := doctorJSON(t, nodes)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, doctor.Info, rep.Worst)
	require.Len(t, rep.Nodes, 1)
	assert.Equal(t, s.Addr(), rep.Nodes[0].Node)
	assert.Equal(t, doctor.OK, nodeFinding(t, rep, doctor.CheckAppendfsync).Severity)

	require.NoError(t, c.ConfigSet(ctx, "appendfsync", "everysec").Err())
	code, rep = doctorJSON(t, nodes)
	assert.Equal(t, exitDoctorWarn, code)
	assert.Equal(t, doctor.Warn, nodeFinding(t, rep, doctor.CheckAppendfsync).Severity)
	code, stdout, stderr := doctorCLI(t, nodes)
	assert.Equal(t, exitDoctorWarn, code, stderr)
	assert.Regexp(t, `(?m)^  warn\s+appendfsync\s+appendfsync everysec$`, stdout)
	assert.Regexp(t, `(?m)^\s+risk: a crash loses`, stdout)
	assert.Regexp(t, `(?m)^worst: warn; 1 of 1 nodes answered \(exit 1\)$`, stdout)

	code, rep = doctorJSON(t, nodes, "--accept", "appendfsync,latency")
	assert.Equal(t, exitOK, code)
	f := nodeFinding(t, rep, doctor.CheckAppendfsync)
	assert.True(t, f.Accepted)
	assert.Equal(t, doctor.Info, f.Severity)
	require.NoError(t, c.ConfigSet(ctx, "appendfsync", "always").Err())

	require.NoError(t, c.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err())
	code, rep = doctorJSON(t, nodes, "--accept", "appendfsync")
	assert.Equal(t, exitDoctorFail, code)
	assert.Equal(t, doctor.Fail, rep.Worst)
	assert.Equal(t, doctor.Fail, nodeFinding(t, rep, doctor.CheckEviction).Severity)
	require.NoError(t, c.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())

	// A node that answers and one that does not: the failure (2); none
	// answering: 3.
	code, _, _ = doctorCLI(t, "--nodes", s.Addr()+",127.0.0.1:1")
	assert.Equal(t, exitDoctorFail, code)
	code, stdout, _ = doctorCLI(t, "--nodes", "127.0.0.1:1,127.0.0.1:2")
	assert.Equal(t, exitDoctorUsage, code)
	assert.Contains(t, stdout, "worst: fail; 0 of 2 nodes answered (exit 3)")
}

// doctor's usage errors exit 3, naming the value; -h lists the checks and
// the exit codes and exits 0.
func TestDoctorCLIUsage(t *testing.T) {
	t.Setenv(envNodes, "")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--nodes=127.0.0.1:1", "--accept", "role"}, `finding "role" cannot be accepted`},
		{[]string{"--nodes=127.0.0.1:1", "--accept", "nosuch"}, `no finding is called "nosuch"`},
		{[]string{"--nodes=127.0.0.1:1", "--cluster", "--replicas", "2"}, "--replicas (2) must be odd"},
		{[]string{"--nodes=127.0.0.1:1", "--replicas", "3"}, "--replicas (3) applies to --cluster only"},
		{[]string{"--nodes=127.0.0.1:1", "--pings", "0"}, "--pings (0)"},
		{[]string{"--nodes=127.0.0.1:1", "--frob"}, "flag provided but not defined: -frob"},
		{[]string{"--nodes=127.0.0.1:1", "extra"}, `unexpected argument "extra"`},
		{nil, "no nodes"},
	} {
		code, stdout, stderr := runCLI(t, append([]string{"doctor"}, tt.args...)...)
		assert.Equal(t, exitDoctorUsage, code, "%v: %s", tt.args, stderr)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, tt.want)
	}
	code, stdout, _ := runCLI(t, "doctor", "-h")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "Exit codes: 0 all ok or info, 1 a warning, 2 a failure, 3 usage error or no node answered.")
	for _, id := range doctor.Checks {
		assert.Contains(t, stdout, "  "+id+" ")
	}
}

// doctor --cluster checks every master of the seeds' cluster, and the
// cluster as a whole: the default 3 copies on 3 masters are placed well
// (exit 0); 5 copies warn (exit 1), under "cluster" in the table; a
// cluster that does not answer exits 3.
func TestDoctorCLICluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0, redistest.Options{Extra: []string{"cluster-require-full-coverage no"}})
	seed := "--nodes=" + cl.Addrs()[1]
	code, rep := doctorJSON(t, seed, "--cluster", "--name", "app:job")
	assert.Equal(t, exitOK, code, "%+v", rep)
	require.Len(t, rep.Nodes, 3)
	for _, n := range rep.Nodes {
		assert.Contains(t, cl.Addrs(), n.Node)
	}
	require.Len(t, rep.Cluster, 2)
	assert.Equal(t, doctor.CheckPlacement, rep.Cluster[0].ID)
	assert.Equal(t, doctor.OK, rep.Cluster[0].Severity)
	assert.Equal(t, doctor.OK, nodeFinding(t, rep, doctor.CheckCoverage).Severity)

	code, stdout, stderr := doctorCLI(t, seed, "--cluster", "--replicas", "5", "--name", "app:job")
	assert.Equal(t, exitDoctorWarn, code, stderr)
	assert.Regexp(t, `(?m)^cluster\n  warn\s+placement\s+3 masters for 5 copies: `, stdout)
	assert.Regexp(t, `(?m)^  ok\s+layout\s+no layout recorded yet: the first client records n=5 B=16`, stdout)
	assert.Regexp(t, `(?m)^worst: warn; 3 of 3 nodes answered \(exit 1\)$`, stdout)

	code, stdout, _ = doctorCLI(t, "--nodes=127.0.0.1:1", "--cluster")
	assert.Equal(t, exitDoctorUsage, code)
	assert.Regexp(t, `(?m)^  fail\s+reachable\s+CLUSTER SLOTS: `, stdout)
}
