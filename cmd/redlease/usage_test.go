package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every usage error exits 2 and names the flag (or argument) at fault and
// its value, before any node is contacted: the nodes here do not exist.
func TestUsageErrors(t *testing.T) {
	t.Setenv(envNodes, "")
	const nodes = "--nodes=127.0.0.1:1,127.0.0.1:2,127.0.0.1:3"
	tests := []struct {
		name string
		args []string
		want []string // in stderr
	}{
		{"no command", nil, []string{"Usage:"}},
		{"unknown command", []string{"frob"}, []string{`unknown command "frob"`}},
		{"undefined flag", []string{"status", "--ttl", "1s", "--name", "x", nodes}, []string{"flag provided but not defined: -ttl"}},
		{"bad duration", []string{"run", "--name", "x", "--ttl", "soon", nodes, "--", "true"}, []string{`invalid value "soon" for flag -ttl`}},
		{"missing name", []string{"status", nodes}, []string{"--name is required"}},
		{"missing name for watch", []string{"watch", nodes}, []string{"--name is required"}},
		{"missing command", []string{"run", "--name", "x", nodes}, []string{"missing COMMAND"}},
		{"stray argument", []string{"status", "--name", "x", nodes, "extra"}, []string{`unexpected argument "extra"`}},
		{"no nodes", []string{"status", "--name", "x"}, []string{"no nodes", "--nodes", envNodes}},
		{"zero ttl", []string{"run", "--name", "x", "--ttl", "0s", nodes, "--", "true"}, []string{"--ttl (0s) must be positive"}},
		{"negative ttl", []string{"run", "--name", "x", "--ttl", "-1s", nodes, "--", "true"}, []string{"--ttl (-1s) must be positive"}},
		{"sub-millisecond ttl", []string{"run", "--name", "x", "--ttl", "1500us", nodes, "--", "true"}, []string{"--ttl (1.5ms)", "whole number of milliseconds"}},
		{"ttl above max-ttl", []string{"run", "--name", "x", "--ttl", "40s", nodes, "--", "true"}, []string{"--ttl (40s) is above --max-ttl (30s)"}},
		{"ttl below node timeouts", []string{"run", "--name", "x", "--ttl", "100ms", "--grace", "0s", nodes, "--", "true"}, []string{"--ttl (100ms) must exceed 2 × --node-timeout"}},
		{"negative grace", []string{"run", "--name", "x", "--grace", "-1s", nodes, "--", "true"}, []string{"--grace (-1s) must not be negative"}},
		{"grace does not fit the ttl", []string{"run", "--name", "x", "--ttl", "10s", "--grace", "8s", nodes, "--", "true"},
			[]string{"--grace (8s) does not fit --ttl (10s)", "8.5s", "7.4235s", "lower --grace or raise --ttl"}},
		{"grace does not fit a short ttl", []string{"run", "--name", "x", "--ttl", "1s", "--grace", "1s", nodes, "--", "true"}, []string{"--grace (1s) does not fit --ttl (1s)"}},
		{"negative wait-majority", []string{"run", "--name", "x", "--wait-majority", "-1s", nodes, "--", "true"}, []string{"--wait-majority (-1s) must not be negative"}},
		{"negative yield-after", []string{"run", "--name", "x", "--yield-after", "-1s", nodes, "--", "true"}, []string{"--yield-after (-1s) must not be negative"}},
		{"zero node timeout", []string{"status", "--name", "x", "--node-timeout", "0s", nodes}, []string{"--node-timeout (0s) must be positive"}},
		{"max-ttl below node timeouts", []string{"status", "--name", "x", "--max-ttl", "50ms", nodes}, []string{"--max-ttl (50ms) must exceed 2 × --node-timeout"}},
		{"even replicas", []string{"status", "--name", "x", "--cluster", "--replicas", "4", nodes}, []string{"--replicas (4) must be odd"}},
		{"replicas without cluster", []string{"status", "--name", "x", "--replicas", "5", nodes}, []string{"--replicas (5) applies to --cluster only"}},
		{"bad node", []string{"status", "--name", "x", "--nodes", "127.0.0.1:1,nohost"}, []string{"--nodes: node 2 (nohost)", "host:port"}},
		{"bad port", []string{"status", "--name", "x", "--nodes", "127.0.0.1:99999"}, []string{"--nodes: node 1 (127.0.0.1:99999)", `bad port "99999"`}},
		{"bad scheme", []string{"status", "--name", "x", "--nodes", "http://127.0.0.1:1"}, []string{"--nodes: node 1 (http://127.0.0.1:1)", `scheme "http"`}},
		{"bad database", []string{"status", "--name", "x", "--nodes", "redis://127.0.0.1:1/x"}, []string{"--nodes: node 1 (redis://127.0.0.1:1/x)", "invalid database number"}},
		{"unknown URL option", []string{"status", "--name", "x", "--nodes", "redis://127.0.0.1:1?colour=red"}, []string{"--nodes: node 1", "unexpected option: colour"}},
		{"duplicate node", []string{"status", "--name", "x", "--nodes", "127.0.0.1:1,redis://127.0.0.1:1"}, []string{"--nodes: node 2 (127.0.0.1:1) is node 1 again"}},
		{"cluster database", []string{"status", "--name", "x", "--cluster", "--nodes", "redis://127.0.0.1:1/2"}, []string{"--nodes: node 1", "database 2", "Redis Cluster"}},
		{"cluster credentials", []string{"status", "--name", "x", "--cluster", "--nodes", "redis://a:pw-one@127.0.0.1:1,redis://a:pw-two@127.0.0.1:2"},
			[]string{"--nodes: node 2 (redis://a:REDACTED@127.0.0.1:2)", "credentials"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			assert.Equal(t, exitUsage, code, "exit code; stderr:\n%s", stderr)
			assert.Empty(t, stdout)
			for _, w := range tt.want {
				assert.Contains(t, stderr, w)
			}
		})
	}
}

// REDLEASE_NODES is read when --nodes is not given, and named in errors.
func TestUsageErrorNamesEnvironment(t *testing.T) {
	t.Setenv(envNodes, "127.0.0.1:1,,bad")
	code, _, stderr := runCLI(t, "status", "--name", "x")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, envNodes+": node 2 (bad)")
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"run", "--help"}, {"status", "-h"}, {"watch", "--help"}} {
		code, stdout, stderr := runCLI(t, args...)
		require.Equal(t, exitOK, code, "%v", args)
		assert.Empty(t, stderr)
		assert.Contains(t, stdout, "Usage:")
		assert.Contains(t, stdout, "xit codes", "%v documents the exit codes", args)
	}
	_, stdout, _ := runCLI(t, "run", "--help")
	for _, flag := range []string{"-name", "-ttl", "-id", "-grace", "-restart", "-wait-majority", "-nodes", "-cluster", "-bootstrap"} {
		assert.Contains(t, stdout, flag)
	}
	assert.True(t, strings.Contains(stdout, "127 if it cannot start"))
}

// A COMMAND that cannot be found exits 127, as shells do, before any node
// is contacted.
func TestRunCommandNotFound(t *testing.T) {
	code, _, stderr := runCLI(t, "run", "--name", "x", "--nodes", "127.0.0.1:1", "--", "redlease-no-such-command")
	assert.Equal(t, exitNoStart, code)
	assert.Contains(t, stderr, "redlease-no-such-command")
}
