package main

import (
	"context"
	"io"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/redlease/redlease/internal/testing/testnodes"
)

// The leader runs the job; when its process stops in the middle of a run,
// the run is cut short and the other worker carries on; never two runs at
// once (run fails if so).
func TestLeaderJob(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Setenv("REDLEASE_NODES", "")
	s := testnodes.RunExample(t, 20*time.Second, func(ctx context.Context, out io.Writer) error {
		return run(ctx, out, 100*time.Millisecond, 4)
	})
	assert.Contains(t, s, "interrupted: the term ended")
	assert.Contains(t, s, "term over")
	// The other worker took over, with a higher token (not a fixed one: an
	// attempt retried under load spends a counter value).
	elected := regexp.MustCompile(`(worker-\d): elected \(token (\d+)\)`).FindAllStringSubmatch(s, -1)
	require.GreaterOrEqual(t, len(elected), 2, "the other worker took over")
	assert.NotEqual(t, elected[0][1], elected[1][1], "the other worker took over")
	first, _ := strconv.Atoi(elected[0][2])
	second, _ := strconv.Atoi(elected[1][2])
	assert.Greater(t, second, first, "the successor's token is higher")
	assert.Contains(t, s, "4 runs, never two at once")
}
