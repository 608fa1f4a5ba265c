//go:build unix

package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/notice"
)

// redlease resign --to: the leader (a redlease run) hands its term over
// to the named standby, which leads next; bad requests get clear errors.
func TestResignTo(t *testing.T) {
	g, nodes := servers(t, 3)
	run := startCLI(t, "run", "--name", "steer", "--id", "r1", "--priority", "3", "--bootstrap", "--ttl", "3s", "--grace", "500ms",
		"--nodes", nodes, "--", "sh", "-c", `echo "pid=$$"; exec sleep 30`)
	reap(t, run.stdout.waitContains(t, "\n"))

	// The standby's registry record, seen on every node: the leader has
	// heard it before the request, which comes after it on each node.
	client := testClient(t, g, "")
	sub, err := client.Internal().Subscribe(context.Background(), notice.Channel("steer"))
	require.NoError(t, err)
	defer sub.Close()
	s2 := standBy(t, client, "steer", "s2")
	heard := map[string]bool{}
	for len(heard) < 3 {
		select {
		case n := <-sub.C():
			if m := notice.Parse(n.Payload); m.Kind == notice.Candidate && m.ID == "s2" {
				heard[n.Node] = true
			}
		case <-time.After(waitLong):
			t.Fatalf("s2's record was not heard on every node")
		}
	}

	code, stdout, stderr := runCLI(t, "resign", "--name", "steer", "--to", "nobody", "--timeout", "500ms", "--nodes", nodes)
	assert.Equal(t, exitError, code, stderr)
	assert.Contains(t, stderr, "did not hand over within 500ms")
	assert.Contains(t, run.stderr.String(), "resign request ignored")
	assert.Contains(t, run.stderr.String(), "no such candidate campaigns (registered: r1, s2)")
	assert.Empty(t, stdout)

	stdout = runOK(t, "resign", "--name", "steer", "--to", "s2", "--nodes", nodes)
	assert.Contains(t, stdout, "s2")
	assert.Contains(t, stdout, "now leads steer")
	s2.waitElected(t)
	assert.Contains(t, run.stderr.String(), "successor=s2")

	code, _, stderr = runCLI(t, "resign", "--name", "steer", "--to", "s2", "--nodes", nodes)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `--to "s2" already leads "steer"`)
	code, _, stderr = runCLI(t, "resign", "--name", "steer", "--nodes", nodes)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--to is required")

	stdout = runOK(t, "status", "--name", "steer", "--candidates", "--nodes", nodes)
	assert.Regexp(t, `verdict: leader s2 `, stdout)
	assert.Regexp(t, `candidates \(preferred leader: r1\):\n  r1\tpriority 3\tsince \S+\n  s2\tpriority 0\tsince `, stdout)
}
