package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// redlease bootstrap makes brand-new nodes vote at once; it names the
// nodes it could not reach (exit 1), and refuses arguments (exit 2).
func TestBootstrapCommand(t *testing.T) {
	g, nodes := servers(t, 3)
	stdout := runOK(t, "bootstrap", "--nodes", nodes)
	assert.Equal(t, "bootstrapped: "+strings.Join(g.Addrs(), ", ")+" vote now\n", stdout)
	stdout = runOK(t, "status", "--name", "boot", "--nodes", nodes)
	assert.Contains(t, stdout, "verdict: no leader; 3 of 3 nodes answered, 2 needed")

	code, _, stderr := runCLI(t, "bootstrap", "--nodes", g.Addrs()[0]+",127.0.0.1:1,"+g.Addrs()[1])
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "127.0.0.1:1: dial tcp")

	code, _, stderr = runCLI(t, "bootstrap", "--nodes", nodes, "now")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `unexpected argument "now"`)

	code, stdout, _ = runCLI(t, "bootstrap", "--help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "Never after a crash")
}
