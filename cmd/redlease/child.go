package main

import (
	"io"
	"os"
	"os/exec"
	"time"
)

// childWaitDelay bounds how long, after the child exited, its output is
// still copied (when redlease's output is not a file, as in tests): a
// process left behind that holds the pipe does not hold redlease.
const childWaitDelay = time.Second

// child is the command `redlease run` starts for a term. On Unix it is
// the leader of a process group of its own: signals go to the whole group,
// so that the processes it started stop with it, and Ctrl-C in a terminal
// reaches it once, through redlease. Its stdin is /dev/null (a background
// process group must not read the terminal).
type child struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the child has exited and been reaped
	code int           // exit code, 128+S if killed by signal S; set before done
}

// startChild starts argv with env, its output on stdout and stderr.
func startChild(argv, env []string, stdout, stderr io.Writer) (*child, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = childWaitDelay
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait() // the exit status is in ProcessState; an I/O error is not the child's
		c.code = exitCode(cmd.ProcessState)
		// Whatever the child left behind in its group must not outlive it,
		// nor the term.
		killGroup(cmd.Process.Pid)
		close(c.done)
	}()
	return c, nil
}

// pid is the child's process ID (and its process group's, on Unix).
func (c *child) pid() int { return c.cmd.Process.Pid }

// stop sends sig to the child's process group, and SIGKILL when it has
// not exited after grace or at killBy, whichever comes first; it returns
// once the child has exited, with its exit code and whether SIGKILL was
// needed.
func (c *child) stop(sig os.Signal, grace time.Duration, killBy time.Time) (code int, killed bool) {
	select {
	case <-c.done:
		return c.code, false // exited meanwhile: its group was killed
	default:
	}
	signalGroup(c.pid(), sig)
	t := time.NewTimer(min(grace, time.Until(killBy)))
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		killed = true
		signalGroup(c.pid(), os.Kill)
		<-c.done
	}
	return c.code, killed
}
