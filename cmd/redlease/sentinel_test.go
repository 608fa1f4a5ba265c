package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/doctor"
	"github.com/redlease/redlease/internal/testing/redistest"
)

// A Sentinel group given as a node: one vote, named by its group and
// sentinels; the same group twice is refused, as is one with --cluster;
// a password given as password= never reaches the output.
func TestSentinelSpec(t *testing.T) {
	c := connFlags{nodes: "redis://s1:26379?master_name=g1&addr=s2:26379&password=sekrit,redis://s2:26379?master_name=g2"}
	set, err := c.resolveNodes(func(string) string { return "" })
	require.NoError(t, err)
	require.Len(t, set.specs, 2)
	assert.Equal(t, "group g1 (sentinels s1:26379,s2:26379)", set.specs[0].name())
	assert.Equal(t, "sekrit", set.specs[0].sentinel.Password)
	assert.Equal(t, []string{"s1:26379", "s2:26379"}, set.specs[0].sentinel.SentinelAddrs)
	assert.Contains(t, set.secrets, "sekrit")

	for _, tt := range []struct {
		nodes   string
		cluster bool
		want    string
	}{
		{"redis://s1:26379?master_name=g1&addr=s2:26379,redis://s2:26379?master_name=g1&addr=s1:26379", false, "node 2 (group g1 (sentinels s1:26379,s2:26379)) is node 1 again"},
		{"redis://s1:26379?master_name=g1", true, "node 1 (group g1 (sentinels s1:26379)) is a Sentinel group: --cluster takes the cluster's seed nodes"},
		{"redis://s1:26379?master_name=&password=sekrit", false, "master_name is empty"},
		{"redis://s1:26379?master_name=g1&password=sekrit&frob=1", false, "node 1 (redis://s1:26379?master_name=g1&password=REDACTED&frob=1)"},
	} {
		c := connFlags{nodes: tt.nodes, cluster: tt.cluster}
		_, err := c.resolveNodes(func(string) string { return "" })
		require.Error(t, err, tt.nodes)
		assert.Contains(t, err.Error(), tt.want)
		assert.NotContains(t, err.Error(), "sekrit")
	}
}

// doctor on a Sentinel group: the group is checked through its master,
// and its sentinels are asked (finding "sentinel").
func TestDoctorCLISentinel(t *testing.T) {
	m := redistest.Start(t, 1, redistest.Options{Persistence: redistest.PersistAOF}).Server(0)
	ss := redistest.StartSentinels(t, 3, map[string]string{"g0": m.Addr()})
	a := ss.Addrs()
	spec := "redis://" + a[0] + "?master_name=g0&addr=" + strings.Join(a[1:], "&addr=")
	code, rep := doctorJSON(t, "--nodes="+spec)
	require.Len(t, rep.Nodes, 1)
	assert.Equal(t, exitOK, code, "%+v", rep)
	assert.True(t, strings.HasPrefix(rep.Nodes[0].Node, "group g0 (sentinels "), rep.Nodes[0].Node)
	f := nodeFinding(t, rep, doctor.CheckSentinel)
	assert.Equal(t, doctor.OK, f.Severity, "%+v", f)
	assert.Contains(t, f.Found, "3 of 3 sentinels answered, all naming the master "+m.Addr())
	assert.Equal(t, doctor.OK, nodeFinding(t, rep, doctor.CheckRole).Severity, "the group's master is checked")
}

// Three Sentinel groups are three nodes for every command: bootstrap
// names them as redlock does (by position: every FailoverClient has the
// address "FailoverClient"), and status reads the election through their
// masters.
func TestStatusSentinelGroups(t *testing.T) {
	g := redistest.Start(t, 3)
	masters := map[string]string{}
	for i, s := range g.Servers() {
		masters["g"+string(rune('0'+i))] = s.Addr()
	}
	ss := redistest.StartSentinels(t, 1, masters)
	var specs []string
	for _, name := range ss.Groups() {
		specs = append(specs, "redis://"+ss.Addrs()[0]+"?master_name="+name)
	}
	nodes := strings.Join(specs, ",")
	stdout := runOK(t, "bootstrap", "--nodes", nodes)
	assert.Equal(t, "bootstrapped: failover#0, failover#1, failover#2 vote now\n", stdout)
	stdout = runOK(t, "status", "--name", "sg", "--nodes", nodes)
	assert.Contains(t, stdout, "verdict: no leader; 3 of 3 nodes answered, 2 needed")
}
