package fence

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/testnodes"
)

// replyTimeout bounds the wait for one line of a leader (an election
// takes a TTL after a pause; the machine may be loaded).
const replyTimeout = 30 * time.Second

// leader is one running internal/leader process.
type leader struct {
	t      testing.TB
	id     string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *testnodes.LogBuffer
}

// startLeader runs the leader program as id with args; t.Cleanup closes
// its stdin (it stops) and kills it by PID if it has not exited.
func startLeader(t *testing.T, id string, args ...string) *leader {
	t.Helper()
	cmd := exec.Command(leaderBin, append([]string{"-id", id}, args...)...)
	l := &leader{t: t, id: id, cmd: cmd, lines: make(chan string, 1000), stderr: &testnodes.LogBuffer{}}
	cmd.Stderr = l.stderr
	var err error
	l.stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	go func() {
		defer close(l.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			l.lines <- sc.Text()
		}
	}()
	t.Cleanup(l.stop)
	return l
}

// stop closes stdin, waits for the exit (killing the process by PID after
// a while), and logs its stderr.
func (l *leader) stop() {
	_ = syscall.Kill(l.cmd.Process.Pid, syscall.SIGCONT) // if the test left it paused
	_ = l.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- l.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(replyTimeout):
		_ = l.cmd.Process.Kill()
		<-done
	}
	if l.t.Failed() {
		l.t.Logf("leader %s stderr:\n%s", l.id, l.stderr.String())
	}
}

// next returns the leader's next line on stdout.
func (l *leader) next() string {
	l.t.Helper()
	select {
	case line, ok := <-l.lines:
		if !ok {
			l.t.Fatalf("leader %s exited; stderr:\n%s", l.id, l.stderr.String())
		}
		return line
	case <-time.After(replyTimeout):
		l.t.Fatalf("leader %s said nothing for %s; stderr:\n%s", l.id, replyTimeout, l.stderr.String())
	}
	return ""
}

// elected waits for the leader's "elected TOKEN" and returns the token.
func (l *leader) elected() uint64 {
	l.t.Helper()
	f := strings.Fields(l.next())
	require.Len(l.t, f, 2, "leader %s: want elected TOKEN", l.id)
	require.Equal(l.t, "elected", f[0], "leader %s", l.id)
	tok, err := strconv.ParseUint(f[1], 10, 64)
	require.NoError(l.t, err)
	return tok
}

// send asks the leader to write value, without waiting for its answer
// (it may be paused).
func (l *leader) send(value string) {
	l.t.Helper()
	_, err := fmt.Fprintf(l.stdin, "write %s\n", value)
	require.NoError(l.t, err)
}

// write asks the leader to write value and returns its answer.
func (l *leader) write(value string) string {
	l.t.Helper()
	l.send(value)
	return l.next()
}

func (l *leader) signal(sig syscall.Signal) {
	l.t.Helper()
	require.NoError(l.t, syscall.Kill(l.cmd.Process.Pid, sig), "leader %s: %s", l.id, sig)
}
