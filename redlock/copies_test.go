package redlock

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/testnodes"
)

// On 5 nodes (quorum 3, 2 spare copies): each lost copy is logged once,
// with the words for what is left, until a majority no longer holds the
// lock: then its extend fails and nothing more is logged (the error says
// it all). The copies are lost to another value, which a restore never
// overwrites (restore.go).
func TestLostCopiesOnFiveNodes(t *testing.T) {
	ctx := context.Background()
	ms, nodes := testnodes.Minis(t, 5)
	logs := &testnodes.LogBuffer{T: t}
	cfg := unitCfg
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: logs})
	c := newClient(t, cfg, nodes)
	l := acquired(t, c, ms, "five", 10*time.Second)
	assert.Equal(t, 2, l.spare())

	// Every node answers before the next Extend counts: the late ones
	// are recorded when they come.
	extendUntil := func(spare int) {
		t.Helper()
		require.Eventually(t, func() bool {
			require.NoError(t, l.Extend(ctx, 0))
			return l.spare() == spare
		}, 5*time.Second, 5*time.Millisecond)
	}
	ms[0].Set("five", "another")
	extendUntil(1)
	require.Eventually(t, func() bool { return logs.Count("lock copy lost") == 1 }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, 1, logs.Count("[WARN]", "held on fewer nodes", "holding=4", "nodes=5", "spare=1"), logs.String())

	ms[1].Set("five", "another")
	extendUntil(0)
	require.Eventually(t, func() bool { return logs.Count("lock copy lost") == 2 }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, 1, logs.Count("[WARN]", "no spare", "holding=3", "nodes=5", "spare=0", "lost_on="), logs.String())

	ms[2].Set("five", "another")
	require.ErrorIs(t, l.Extend(ctx, 0), ErrNotExtended, "2 of 5 nodes hold it")
	require.ErrorIs(t, l.Extend(ctx, 0), ErrNotExtended) // after the first one's late answers
	assert.Equal(t, 2, logs.Count("lock copy"), "no record once a majority lost it:\n%s", logs.String())
}

// An answer of an older extend that is noted after a later extend's answer
// from the same node says nothing: a late yes (a request the node ran
// before its copy was deleted) does not bring the copy back, and a late no
// does not take back a copy a later extend found. Before, under load, the
// holder logged "lost", "back", "lost" for one deletion.
func TestLateAnswerOfOlderExtendIgnored(t *testing.T) {
	c, nodes := bareClient(t, 3)
	l := &Lock{c: c, nodes: nodes, key: "late"}
	t0 := time.Now()
	t1, t2 := t0.Add(time.Millisecond), t0.Add(2*time.Millisecond)

	l.noteCopy(t1, 2, voteNo)
	require.Equal(t, 0, l.spare(), "node 2 lost its copy")
	l.noteCopy(t0, 2, voteYes) // the older extend's late yes
	assert.Equal(t, 0, l.spare(), "an older extend's yes brought the copy back")

	l.noteCopies(t2, []answer{{vote: voteYes}, {vote: voteYes}, {vote: voteYes}})
	require.Equal(t, 1, l.spare(), "a later extend found the copy again")
	l.noteCopy(t1, 2, voteNo) // an older extend's late no
	assert.Equal(t, 1, l.spare(), "an older extend's no took the copy away")
}
