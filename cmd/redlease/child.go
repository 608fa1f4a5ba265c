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
//
// Started under a watchdog (startWatched), cmd is the watchdog's process,
// which is COMMAND's parent: signals reach COMMAND's group through it.
type child struct {
	cmd    *exec.Cmd
	leader int           // COMMAND's PID, and its process group's on Unix
	done   chan struct{} // closed when the child has exited and been reaped
	code   int           // exit code, 128+S if killed by signal S; set before done

	signal   func(os.Signal) // sends a signal to COMMAND's group
	extend   func(time.Time) // tells the watchdog the term's new validity; nil without one
	watchdog *watchdogLink   // nil without one
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
	pid := cmd.Process.Pid
	c := &child{cmd: cmd, leader: pid, done: make(chan struct{}), signal: func(sig os.Signal) { signalGroup(pid, sig) }}
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

// pid is COMMAND's process ID (and its process group's, on Unix).
func (c *child) pid() int { return c.leader }

// extendTo tells the watchdog, if any, that the term is valid until
// validUntil.
func (c *child) extendTo(validUntil time.Time) {
	if c.extend != nil {
		c.extend(validUntil)
	}
}

// killedAtDeadline returns what the watchdog reported of its kill of
// COMMAND at the term's deadline: zero if it did not kill it (or there is
// no watchdog). Read it once done is closed.
func (c *child) killedAtDeadline() watchdogKill {
	if c.watchdog == nil {
		return watchdogKill{}
	}
	return c.watchdog.kill()
}

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
	c.signal(sig)
	t := time.NewTimer(min(grace, time.Until(killBy)))
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		killed = true
		c.signal(os.Kill)
		<-c.done
	}
	return c.code, killed
}

// watchdogKill is what the watchdog reported of its kill of COMMAND at the
// term's deadline.
type watchdogKill struct {
	at   time.Time     // when; zero if it did not kill
	left time.Duration // how long before the validity it was told ended
}
