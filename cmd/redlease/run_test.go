//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/lockrule"
	"github.com/redlease/redlease/redlock"
)

// The children below print their PID ($$, the leader of their process
// group) first; reap kills the group on cleanup, by that PID, in case a
// test failed before redlease stopped it.

var pidLine = regexp.MustCompile(`pid=(\d+)`)

// reap registers the kill of the process group whose leader's PID the
// child printed in out.
func reap(t testing.TB, out string) int {
	t.Helper()
	m := pidLine.FindStringSubmatch(out)
	require.NotNil(t, m, "the child prints its pid: %q", out)
	pid, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	return pid
}

// alive reports whether the process group led by pid has a member that
// is not a zombie (where PID 1 does not reap orphans, as in some
// containers, a killed grandchild stays a zombie of the group). Without
// /proc, it asks the kernel whether the group exists.
func alive(pid int) bool {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		return syscall.Kill(-pid, 0) == nil
	}
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(fields) > 2 && fields[2] == strconv.Itoa(pid) && fields[0] != "Z" {
			return true
		}
	}
	return false
}

// gone waits until the process group led by pid has no live member:
// SIGKILL is sent to the group as the child is reaped, and takes effect a
// moment later.
func gone(t *testing.T, pid int, msg string) {
	t.Helper()
	assert.Eventually(t, func() bool { return !alive(pid) }, 5*time.Second, 5*time.Millisecond, msg)
}

// Elected, the child sees the token, the name and the ID; when it exits
// with code 3, redlease resigns (nobody holds the election any more) and
// exits 3.
func TestRunChildExitCode(t *testing.T) {
	g, nodes := servers(t, 3)
	c := startCLI(t, "run", "--name", "exit-code", "--id", "runner-1", "--bootstrap", "--ttl", "3s", "--grace", "500ms",
		"--nodes", nodes, "--", "sh", "-c", `echo "pid=$$ token=$REDLEASE_TOKEN name=$REDLEASE_NAME id=$REDLEASE_ID"; exit 3`)
	out := c.stdout.waitContains(t, "\n")
	reap(t, out)
	assert.Regexp(t, `token=[1-9]\d* name=exit-code id=runner-1`, out)
	assert.Equal(t, 3, c.wait(t))

	client := testClient(t, g, "")
	_, err := client.Inspect(context.Background(), "exit-code")
	assert.ErrorIs(t, err, redlock.ErrNoHolder, "redlease resigned on its way out")
	assert.Contains(t, c.stderr.String(), "resigned; exiting with the command's code: code=3")
}

// Losing leadership (a majority of servers frozen: the term cannot be
// refreshed) SIGTERMs the child before the term's validity ends. The bound
// is checked from the outside too: the last refresh started before the
// servers froze, so the validity ended at the latest TTL - drift after that.
func TestRunLosingLeadershipStopsChild(t *testing.T) {
	g, nodes := servers(t, 3)
	const ttl = 2 * time.Second
	c := startCLI(t, "run", "--name", "lost", "--id", "runner-1", "--bootstrap", "--ttl", ttl.String(), "--grace", "500ms",
		"--nodes", nodes, "--", "sh", "-c", `trap 'echo got TERM; exit 0' TERM; echo "pid=$$ token=$REDLEASE_TOKEN"; sleep 30 & wait`)
	pid := reap(t, c.stdout.waitContains(t, "token="))
	require.True(t, alive(pid))

	t.Cleanup(func() { // before the servers' own cleanup stops them
		for _, s := range g.Servers() {
			_ = s.Resume()
		}
	})
	frozen := time.Now()
	require.NoError(t, g.Server(0).Pause())
	require.NoError(t, g.Server(1).Pause())
	c.stdout.waitContains(t, "got TERM")
	termed := time.Now() // seen at the latest here
	validityBound := frozen.Add(ttl - lockrule.Drift(ttl, lockrule.DefaultDriftFactor))
	assert.True(t, termed.Before(validityBound), "SIGTERM %s after the term's validity ended", termed.Sub(validityBound))
	c.stderr.waitContains(t, "command stopped before the term's validity ended")
	assert.NotContains(t, c.stderr.String(), "after the term's validity ended")
	assert.Contains(t, c.stderr.String(), "lease lost")
	gone(t, pid, "the child's group is gone")

	// Standing by now (no majority): SIGTERM ends redlease; the child it
	// stopped exited 0.
	assert.Equal(t, 0, c.interrupt(t, signalCause{syscall.SIGTERM}))
}

// SIGINT is forwarded to the child, and redlease exits with its code;
// it resigned on the way out. The background sleep ignores SIGINT (sh
// starts background jobs so) and outlives the shell: it is killed with the
// child's group (after childWaitDelay here, where redlease's output is not
// a file and the sleep holds the pipe to it).
func TestRunForwardsSignal(t *testing.T) {
	g, nodes := servers(t, 3)
	c := startCLI(t, "run", "--name", "forward", "--bootstrap", "--ttl", "3s", "--grace", "2s", "--nodes", nodes,
		"--", "sh", "-c", `trap 'echo got INT; exit 7' INT; echo "pid=$$ ready"; sleep 30 & wait`)
	pid := reap(t, c.stdout.waitContains(t, "ready"))
	assert.Equal(t, 7, c.interrupt(t, signalCause{syscall.SIGINT}))
	assert.Contains(t, c.stdout.String(), "got INT")
	assert.Contains(t, c.stderr.String(), "killed=false")
	gone(t, pid, "the background sleep is gone with the group")

	client := testClient(t, g, "")
	_, err := client.Inspect(context.Background(), "forward")
	assert.ErrorIs(t, err, redlock.ErrNoHolder, "redlease resigned on its way out")
}

// A child that ignores SIGTERM gets SIGKILL after --grace: exit 128+9.
func TestRunKillsAfterGrace(t *testing.T) {
	_, nodes := servers(t, 3)
	c := startCLI(t, "run", "--name", "stubborn", "--bootstrap", "--ttl", "3s", "--grace", "200ms", "--nodes", nodes,
		"--", "sh", "-c", `trap '' TERM; echo "pid=$$ ready"; sleep 30`)
	pid := reap(t, c.stdout.waitContains(t, "ready"))
	start := time.Now()
	assert.Equal(t, 128+int(syscall.SIGKILL), c.interrupt(t, signalCause{syscall.SIGTERM}))
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond, "SIGKILL only after --grace")
	assert.Contains(t, c.stderr.String(), "killed=true")
	gone(t, pid, "sleep, which ignored SIGTERM too, is gone with its group")
}

// With --restart, a child that exits on its own is started again once
// redlease is re-elected, with a new token. (The child exits the first
// time, and then waits to be stopped.)
func TestRunRestart(t *testing.T) {
	_, nodes := servers(t, 3)
	marker := t.TempDir() + "/ran"
	c := startCLI(t, "run", "--name", "restart", "--restart", "--bootstrap", "--ttl", "3s", "--grace", "500ms", "--nodes", nodes,
		"--", "sh", "-c", `echo "pid=$$ started token=$REDLEASE_TOKEN"; [ -e "$1" ] && exec sleep 30; touch "$1"`, "sh", marker)
	out := c.stdout.waitFor(t, "a second start", func(s string) bool { return len(startedRE.FindAllString(s, -1)) >= 2 })
	starts := startedRE.FindAllStringSubmatch(out, -1)
	reap(t, starts[1][0])
	t1, _ := strconv.Atoi(starts[0][1])
	t2, _ := strconv.Atoi(starts[1][1])
	assert.Greater(t, t2, t1, "a new term")
	assert.Equal(t, 128+int(syscall.SIGTERM), c.interrupt(t, signalCause{syscall.SIGTERM}), "sleep's code")
	assert.Contains(t, c.stderr.String(), "campaigning again (--restart)")
}

var startedRE = regexp.MustCompile(`pid=\d+ started token=(\d+)`)

func TestStopSignal(t *testing.T) {
	assert.Equal(t, syscall.SIGTERM, stopSignal(errors.New("lease: lost")))
	cause := errors.Join(context.Canceled, signalCause{syscall.SIGINT})
	assert.Equal(t, syscall.SIGINT, stopSignal(cause))
}

// Without --id, redlease logs the ID it campaigns with, "<hostname>-<pid>"
// made real, and the child sees the same (#32: the log showed the
// placeholder).
func TestRunLogsDefaultID(t *testing.T) {
	_, nodes := servers(t, 3)
	host, err := os.Hostname()
	require.NoError(t, err)
	want := host + "-" + strconv.Itoa(os.Getpid())
	c := startCLI(t, "run", "--name", "default-id", "--bootstrap", "--ttl", "3s", "--nodes", nodes,
		"--", "sh", "-c", `echo "pid=$$ id=$REDLEASE_ID"`)
	reap(t, c.stdout.waitContains(t, "\n"))
	assert.Equal(t, 0, c.wait(t))
	assert.Contains(t, c.stdout.String(), "id="+want+"\n")
	assert.Contains(t, c.stderr.String(), "campaigning: key=default-id id="+want+" ")
	assert.NotContains(t, c.stderr.String(), "<hostname>")
}
