package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/redlease/redlease/internal/testing/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Without REDLEASE_CLUSTER the example says what it needs and exits 2.
func TestClusterUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), &stdout, &stderr, " , ", false))
	assert.Empty(t, stdout.String())
	assert.Contains(t, stderr.String(), "REDLEASE_CLUSTER is not set")
}

// On a real 3-master cluster: the copies on 3 masters, a leader, its
// resignation, the next leader.
func TestCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, &stdout, &stderr, strings.Join(cl.Addrs(), ","), true)
	t.Log(stdout.String())
	require.Equal(t, 0, code, stderr.String())
	out := stdout.String()
	assert.Equal(t, 3, strings.Count(out, "on master 127.0.0.1:"))
	assert.NotContains(t, out, "warning")
	assert.Regexp(t, `(east|west) took over with token \d+ > \d+`, out)
}
