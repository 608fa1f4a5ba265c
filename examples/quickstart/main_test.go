package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The quickstart must keep running: make test runs it on embedded nodes,
// and checks the story it tells.
func TestQuickstart(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Setenv("REDLEASE_NODES", "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	start := time.Now()
	require.NoError(t, run(ctx, &out))
	t.Logf("%s in %s", out.String(), time.Since(start))

	s := out.String()
	assert.Contains(t, s, "crashes")
	assert.Regexp(t, `took over \S+ after the crash`, s)
	assert.Regexp(t, `waking up late, writes with token \d+: refused`, s)
	assert.Regexp(t, `took over \S+ after the resignation`, s)
	assert.Contains(t, s, "its client was closed (crashed)")
	assert.Contains(t, s, "observer: no leader")
	var tokens []int
	for _, m := range regexp.MustCompile(`elected, fencing token (\d+)`).FindAllStringSubmatch(s, -1) {
		n, _ := strconv.Atoi(m[1])
		tokens = append(tokens, n)
	}
	require.GreaterOrEqual(t, len(tokens), 3, "three terms")
	for i := 1; i < len(tokens); i++ {
		assert.Greater(t, tokens[i], tokens[i-1], "tokens grow with every term")
	}
}
