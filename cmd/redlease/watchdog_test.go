//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/lockrule"
	"github.com/redlease/redlease/internal/testing/checker"
)

// The test binary plays two more parts for the watchdog's tests, chosen
// by its first argument: a real `redlease` process (the supervisor that
// the test freezes), and a child that logs its life on CLOCK_MONOTONIC.
const (
	asRedlease = "as-redlease"
	asChild    = "as-heartbeat-child"
)

// heartbeatEvery is how often the heartbeat child logs that it runs.
const heartbeatEvery = 2 * time.Millisecond

// subprocessMain runs the part the test binary was started for, if any.
func subprocessMain() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case asRedlease:
		os.Args = append(os.Args[:1:1], os.Args[2:]...)
		main()
	case asChild:
		if len(os.Args) > 3 && os.Args[3] == "ignore-term" {
			signal.Ignore(syscall.SIGTERM)
		}
		heartbeat(os.Args[2])
	}
}

// The test binary's arguments for a heartbeat child: asChild FILE
// [ignore-term].

// heartbeat appends "start M TOKEN PID", then "beat M TOKEN" every
// heartbeatEvery, to file, M being CLOCK_MONOTONIC in ns: every line is
// one write, so its last line is the last moment it is known to have run.
// It runs until it is killed.
func heartbeat(file string) {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		os.Exit(3)
	}
	token := os.Getenv("REDLEASE_TOKEN")
	fmt.Fprintf(f, "start %d %s %d\n", monoNow(), token, os.Getpid())
	for {
		time.Sleep(heartbeatEvery)
		fmt.Fprintf(f, "beat %d %s\n", monoNow(), token)
	}
}

// tenures reads a heartbeat file: one tenure per token, from its start to
// its last beat (on CLOCK_MONOTONIC, as times since the Unix epoch), and
// the children's PIDs.
func tenures(t *testing.T, file string) (ts []checker.Tenure, pids []int) {
	t.Helper()
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil, nil
	}
	require.NoError(t, err)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i] // a line being written is not read
	} else {
		return nil, nil
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		require.GreaterOrEqual(t, len(f), 3, "line %q of %s", line, file)
		ns, err := strconv.ParseInt(f[1], 10, 64)
		require.NoError(t, err)
		token, err := strconv.ParseUint(f[2], 10, 64)
		require.NoError(t, err)
		at := time.Unix(0, ns)
		switch {
		case f[0] == "start":
			ts = append(ts, checker.Tenure{Start: at, End: at, Token: token})
			pid, err := strconv.Atoi(f[3])
			require.NoError(t, err)
			pids = append(pids, pid)
		case len(ts) > 0 && ts[len(ts)-1].Token == token:
			ts[len(ts)-1].End = at
		}
	}
	return ts, pids
}

// waitTenures waits until file shows a tenure that satisfies ok.
func waitTenures(t *testing.T, file, what string, ok func([]checker.Tenure) bool) []checker.Tenure {
	t.Helper()
	var ts []checker.Tenure
	require.Eventually(t, func() bool {
		ts, _ = tenures(t, file)
		return ok(ts)
	}, waitLong, heartbeatEvery, what)
	return ts
}

// process is a `redlease` process of the test.
type process struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{}
}

// startRedlease starts a real `redlease` process with args and extra
// environment; it is killed on cleanup, and the heartbeat children of
// files with it.
func startRedlease(t *testing.T, env []string, files []string, args ...string) *process {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	p := &process{cmd: exec.Command(exe, append([]string{asRedlease}, args...)...),
		stdout: newSyncBuffer(), stderr: newSyncBuffer(), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, p.cmd.Start())
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGCONT)
		_ = p.cmd.Process.Kill()
		<-p.done
		for _, f := range files {
			_, pids := tenures(t, f)
			for _, pid := range pids {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
		}
		if t.Failed() {
			t.Logf("redlease %s\nstderr:\n%s", strings.Join(args, " "), p.stderr)
		}
	})
	return p
}

// freeze stops the process (SIGSTOP) and returns when it is stopped.
func (p *process) freeze(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGSTOP))
	stat := "/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/stat"
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(stat)
		i := bytes.LastIndexByte(b, ')')
		return err == nil && i >= 0 && i+2 < len(b) && b[i+2] == 'T'
	}, waitLong, time.Millisecond, "redlease stopped")
}

// A frozen `redlease run` (SIGSTOP) cannot keep its command running: the
// watchdog kills the command before the term's validity ends, the next
// leader's command starts only after the last beat of the frozen
// leader's, and once resumed, redlease names the pause as the cause. The
// control, without the watchdog, shows both commands running at once.
func TestRunWatchdogFrozenSupervisor(t *testing.T) {
	for _, tc := range []struct {
		name     string
		watchdog bool
	}{{"watchdog", true}, {"control without the watchdog", false}} {
		t.Run(tc.name, func(t *testing.T) { testFrozenSupervisor(t, tc.watchdog) })
	}
}

func testFrozenSupervisor(t *testing.T, watchdog bool) {
	_, nodes := servers(t, 3)
	const ttl = 2 * time.Second
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	fileA, fileB := dir+"/a", dir+"/b"
	var env []string
	if !watchdog {
		env = []string{envNoWatchdog + "=1"}
	}
	args := func(id, file string) []string {
		return []string{"run", "--name", "frozen", "--id", id, "--bootstrap", "--ttl", ttl.String(), "--grace", "300ms",
			"--nodes", nodes, "--", exe, asChild, file}
	}
	a := startRedlease(t, env, []string{fileA}, args("A", fileA)...)
	waitTenures(t, fileA, "A's command started", func(ts []checker.Tenure) bool { return len(ts) == 1 })
	b := startCLI(t, args("B", fileB)...)
	t.Cleanup(func() { // before the cleanup of startCLI: kill what B's command left if B failed
		_, pids := tenures(t, fileB)
		for _, pid := range pids {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	})
	b.stderr.waitContains(t, "campaigning")

	a.freeze(t)
	frozen := time.Unix(0, int64(monoNow())) // A's last refresh began before this
	tsB := waitTenures(t, fileB, "B's command started", func(ts []checker.Tenure) bool { return len(ts) == 1 })
	if !watchdog {
		// A's command runs on: wait for its beat after B's command began.
		waitTenures(t, fileA, "A's command beats after B's began", func(ts []checker.Tenure) bool { return ts[0].End.After(tsB[0].Start) })
	}
	tsA, _ := tenures(t, fileA)
	require.Len(t, tsA, 1)
	all := []checker.Tenure{tsA[0], tsB[0]}
	overlaps := checker.Overlaps(all)
	validity := frozen.Add(ttl - lockrule.Drift(ttl, lockrule.DefaultDriftFactor))
	t.Logf("A's command: last beat %s after the freeze, %s before the bound of its term's validity; B's command started %s after it",
		tsA[0].End.Sub(frozen), validity.Sub(tsA[0].End), tsB[0].Start.Sub(tsA[0].End))
	if watchdog {
		assert.Empty(t, overlaps, "B's command started %s after A's last beat", tsB[0].Start.Sub(tsA[0].End))
		assert.True(t, tsA[0].End.Before(validity), "A's command ran %s past its term's validity", tsA[0].End.Sub(validity))
		assert.Greater(t, tsB[0].Token, tsA[0].Token)
	} else {
		assert.NotEmpty(t, overlaps, "without the watchdog, A's command runs while A is frozen")
	}

	resumeFrozen(t, a, watchdog)
}

// resumeFrozen resumes the frozen supervisor a, checks what it says about
// its pause (the watchdog's verdict, or the command that ran on), and
// ends it with SIGTERM.
func resumeFrozen(t *testing.T, a *process, watchdog bool) {
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGCONT))
	msg := a.stderr.waitContains(t, "this process was paused for ")
	for line := range strings.Lines(msg) {
		if strings.Contains(line, "paused for") {
			t.Logf("A, resumed: %s", line)
		}
	}
	assert.NotContains(t, msg, "raise --ttl")
	if watchdog {
		assert.Contains(t, msg, "the watchdog killed the command before the term's validity ended")
	} else {
		assert.Contains(t, msg, "the command ran on while it was frozen")
	}
	// A stands by now; SIGTERM ends it.
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-a.done:
	case <-time.After(waitLong):
		t.Fatalf("redlease did not exit within %s after SIGTERM", waitLong)
	}
}

// When redlease dies (SIGKILL), the watchdog stops its command: SIGTERM at
// once, SIGKILL at the term's deadline for a command that ignores SIGTERM,
// before the term's validity ends; then the watchdog exits too.
func TestRunWatchdogSupervisorKilled(t *testing.T) {
	_, nodes := servers(t, 3)
	const ttl = 2 * time.Second
	exe, err := os.Executable()
	require.NoError(t, err)
	file := t.TempDir() + "/a"
	a := startRedlease(t, nil, []string{file}, "run", "--name", "killed", "--bootstrap", "--ttl", ttl.String(),
		"--grace", "300ms", "--nodes", nodes, "--", exe, asChild, file, "ignore-term")
	waitTenures(t, file, "the command started", func(ts []checker.Tenure) bool { return len(ts) == 1 })
	_, pids := tenures(t, file)

	require.NoError(t, a.cmd.Process.Kill())
	killed := time.Unix(0, int64(monoNow())) // the last refresh began before this
	gone(t, pids[0], "the command is killed")
	ts, _ := tenures(t, file)
	validity := killed.Add(ttl - lockrule.Drift(ttl, lockrule.DefaultDriftFactor))
	t.Logf("the command's last beat: %s after redlease was killed, %s before the bound of its term's validity",
		ts[0].End.Sub(killed), validity.Sub(ts[0].End))
	assert.True(t, ts[0].End.Before(validity), "the command ran %s past its term's validity", ts[0].End.Sub(validity))
	select {
	case <-a.done: // redlease's output is closed once the watchdog, which holds it, has exited
	case <-time.After(waitLong):
		t.Fatalf("the watchdog did not exit within %s after its command", waitLong)
	}
}

// The watchdog survives the signals sent to every process of a service
// (systemd's SIGTERM, SIGHUP): its death would SIGKILL COMMAND at once,
// while redlease gives it --grace. Here SIGTERM reaches the watchdog
// first, then redlease, which forwards it: COMMAND exits by its trap.
func TestRunWatchdogSurvivesServiceSignals(t *testing.T) {
	_, nodes := servers(t, 3)
	c := startCLI(t, "run", "--name", "service-signals", "--bootstrap", "--ttl", "3s", "--grace", "2s", "--nodes", nodes,
		"--", "sh", "-c", `trap 'echo got TERM; exit 7' TERM; echo "pid=$$ ready"; sleep 30 & wait`)
	pid := reap(t, c.stdout.waitContains(t, "ready"))
	watchdog := parentOf(t, pid)
	require.NotEqual(t, os.Getpid(), watchdog, "the command's parent is the watchdog")
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM} {
		require.NoError(t, syscall.Kill(watchdog, sig))
	}
	assert.Equal(t, 7, c.interrupt(t, signalCause{syscall.SIGTERM}), "COMMAND's trap, not pdeathsig's SIGKILL")
	assert.Contains(t, c.stdout.String(), "got TERM")
}

// parentOf returns the parent PID of pid.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	require.NoError(t, err)
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])) // state ppid ...
	ppid, err := strconv.Atoi(fields[1])
	require.NoError(t, err)
	return ppid
}

// The watchdog alone (no election): it kills COMMAND's group margin
// before the deadline it was last told, not before; and refuses to start
// COMMAND when that deadline has passed already.
func TestWatchdogDeadline(t *testing.T) {
	// Generous: under load (two test binaries, -race, on 2 cores) the
	// watchdog's timer and the child's start may run tens of ms late, and
	// 25ms (with deadlines 200-300ms away) failed 3 runs in a row there.
	const margin = 250 * time.Millisecond
	start := func(t *testing.T, validUntil time.Time) (*child, *syncBuffer, error) {
		out := newSyncBuffer()
		c, err := startWatched([]string{"sh", "-c", `echo "pid=$$ started"; exec sleep 30`}, os.Environ(), out, out, validUntil, margin)
		if err == nil {
			reap(t, out.waitContains(t, "started"))
		}
		return c, out, err
	}
	t.Run("killed at the deadline", func(t *testing.T) {
		validUntil := time.Now().Add(1500 * time.Millisecond)
		c, _, err := start(t, validUntil)
		require.NoError(t, err)
		waitDone(t, c)
		assert.Equal(t, 128+int(syscall.SIGKILL), c.code)
		k := c.killedAtDeadline()
		require.False(t, k.at.IsZero(), "the watchdog reports its kill")
		assert.False(t, time.Now().Before(validUntil.Add(-margin)), "not before the deadline less the margin")
		assert.Greater(t, k.left, time.Duration(0), "killed before the validity ended")
		assert.LessOrEqual(t, k.left, margin)
	})
	t.Run("extended", func(t *testing.T) {
		first := time.Now().Add(1500 * time.Millisecond)
		c, _, err := start(t, first)
		require.NoError(t, err)
		c.extendTo(first.Add(time.Hour))
		select {
		case <-c.done:
			t.Fatalf("killed at the first deadline despite the extension: code %d", c.code)
		case <-time.After(time.Until(first.Add(100 * time.Millisecond))): // past the first deadline
		}
		c.signal(syscall.SIGTERM)
		waitDone(t, c)
		assert.Equal(t, 128+int(syscall.SIGTERM), c.code, "signals reach COMMAND through the watchdog")
		assert.True(t, c.killedAtDeadline().at.IsZero())
	})
	t.Run("expired", func(t *testing.T) {
		_, out, err := start(t, time.Now().Add(-time.Second))
		require.ErrorIs(t, err, errTermExpired)
		assert.NotContains(t, out.String(), "started")
	})
}

// waitDone waits until the child has exited.
func waitDone(t *testing.T, c *child) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(waitLong):
		t.Fatalf("the child did not exit within %s", waitLong)
	}
}
