package main

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/scripts"
)

// redlease library loads the Function library on every node (again: no
// error), names the nodes it could not reach (exit 1), and refuses
// --cluster and arguments (exit 2).
func TestLibraryCommand(t *testing.T) {
	g, nodes := servers(t, 2)
	for range 2 {
		stdout := runOK(t, "library", "--nodes", nodes)
		assert.Equal(t, "library redlease_"+scripts.Version+" loaded: "+g.Addrs()[0]+", "+g.Addrs()[1]+"\n", stdout)
	}
	for _, c := range g.Clients(t) {
		libs, err := c.FunctionList(context.Background(), redis.FunctionListQuery{}).Result()
		require.NoError(t, err)
		require.Len(t, libs, 1)
		assert.Equal(t, "redlease_"+scripts.Version, libs[0].Name)
	}

	code, stdout, stderr := runCLI(t, "library", "--nodes", g.Addrs()[0]+",127.0.0.1:1")
	assert.Equal(t, exitError, code)
	assert.Contains(t, stdout, g.Addrs()[0])
	assert.Contains(t, stderr, "127.0.0.1:1: dial tcp")

	code, _, stderr = runCLI(t, "library", "--nodes", nodes, "--cluster")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "independent nodes")
	code, _, stderr = runCLI(t, "library", "--nodes", nodes, "now")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `unexpected argument "now"`)
}
