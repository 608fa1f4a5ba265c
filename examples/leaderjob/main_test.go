package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The leader runs the job; when its process stops in the middle of a run,
// the run is cut short and the other worker carries on; never two runs at
// once (run fails if so).
func TestLeaderJob(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Setenv("REDLEASE_NODES", "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out, 100*time.Millisecond, 4))
	t.Log(out.String())
	s := out.String()
	assert.Contains(t, s, "interrupted: the term ended")
	assert.Contains(t, s, "term over")
	assert.Regexp(t, `worker-\d: elected \(token 2\)`, s, "the other worker took over")
	assert.Contains(t, s, "4 runs, never two at once")
}
