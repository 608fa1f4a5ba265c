//go:build linux

package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/checker"
	"github.com/redlease/redlease/lease"
)

// `redlease run --permits 2`: two of three candidates run their command;
// when one of them freezes (SIGSTOP), the watchdog kills its command
// before the permit's validity ends, and the third candidate's command
// starts after that command's last beat: never three at once (the
// K-checker). The control, without the watchdog, shows three at once.
func TestRunPermitsFrozenSupervisor(t *testing.T) {
	for _, tc := range []struct {
		name     string
		watchdog bool
	}{{"watchdog", true}, {"control without the watchdog", false}} {
		t.Run(tc.name, func(t *testing.T) { testPermitsFrozen(t, tc.watchdog) })
	}
}

func testPermitsFrozen(t *testing.T, watchdog bool) {
	_, nodes := servers(t, 3)
	const ttl = 2 * time.Second
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	files := []string{dir + "/a", dir + "/b", dir + "/c"}
	var env []string
	if !watchdog {
		env = []string{envNoWatchdog + "=1"}
	}
	args := func(id, file string) []string {
		return []string{"run", "--name", "permits", "--permits", "2", "--id", id, "--bootstrap", "--ttl", ttl.String(),
			"--grace", "300ms", "--nodes", nodes, "--", exe, asChild, file}
	}
	started := func(ts []checker.Tenure) bool { return len(ts) == 1 }
	a := startRedlease(t, env, files[:1], args("A", files[0])...)
	startRedlease(t, env, files[1:2], args("B", files[1])...)
	waitTenures(t, files[0], "A's command started", started)
	waitTenures(t, files[1], "B's command started", started)
	c := startRedlease(t, env, files[2:], args("C", files[2])...)
	c.stderr.waitContains(t, "waiting for a permit")

	a.freeze(t)
	tsC := waitTenures(t, files[2], "C's command started", started)
	if !watchdog {
		waitTenures(t, files[0], "A's command beats after C's began", func(ts []checker.Tenure) bool { return ts[0].End.After(tsC[0].Start) })
	}
	var all []checker.Tenure
	for _, f := range files {
		ts, _ := tenures(t, f)
		require.Len(t, ts, 1, "%s: one command each", f)
		all = append(all, ts[0])
	}
	crowds := checker.OverK(all, 2)
	t.Logf("C's command started %s after A's last beat", all[2].Start.Sub(all[0].End))
	if watchdog {
		assert.Empty(t, crowds, "three commands at once")
	} else {
		assert.NotEmpty(t, crowds, "control: without the watchdog, A's command runs while A is frozen")
	}
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGCONT))
}

func TestRunPermitsFlags(t *testing.T) {
	for args, want := range map[string][]string{
		"--permits (0) must be between 1 and 1024":       {"--permits", "0"},
		"--permits (1025) must be between 1 and 1024":    {"--permits", "1025"},
		"do not apply with --permits 3":                  {"--permits", "3", "--priority", "2"},
		"--yield-after order an election's candidates: ": {"--permits", "3", "--yield-after", "1s"},
	} {
		code, _, stderr := runCLI(t, append(append([]string{"run", "--name", "p", "--nodes", "127.0.0.1:1"}, want...), "--", "true")...)
		assert.Equal(t, exitUsage, code, "%v", want)
		assert.Contains(t, stderr, args, "%v", want)
	}
}

// watch --permits lists who holds which permit of a semaphore, and how
// many are free.
func TestWatchPermits(t *testing.T) {
	g, nodes := servers(t, 3)
	client := testClient(t, g, "")
	l, err := lease.TryAcquire(context.Background(), client, "watched-sem", lease.Config{ID: "w1", Permits: 3})
	require.NoError(t, err)
	defer func() { _ = l.Release(context.Background()) }()
	w := startCLI(t, "watch", "--name", "watched-sem", "--permits", "3", "--nodes", nodes)
	w.stdout.waitContains(t, "1 of 3 permits held (2 free): ")
	j := startCLI(t, "watch", "--name", "watched-sem", "--permits", "3", "--nodes", nodes, "--json")
	out := j.stdout.waitContains(t, "\n")
	var line watchLine
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(out)), &line), out)
	assert.Equal(t, statePermits, line.State)
	require.Len(t, line.Permits, 3)
	h := l.Holder()
	assert.Equal(t, watchPermit{Permit: h.Permit, Holder: "w1", Token: h.Token}, line.Permits[h.Permit])
	assert.Equal(t, exitOK, w.interrupt(t, signalCause{syscall.SIGINT}))
}
