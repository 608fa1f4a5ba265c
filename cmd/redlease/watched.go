//go:build unix

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// watchdogAvailable: Unix has process groups and signals to stop.
const watchdogAvailable = true

// startWatched starts argv with env under a watchdog process (see
// cmdWatchdog): the same executable re-executed, told that the term is
// valid until validUntil, which kills COMMAND's group margin before the
// validity it was last told ends. The child it returns is COMMAND as seen
// through the watchdog: its pid is COMMAND's, signals go to COMMAND's
// group through the watchdog, extend moves the watchdog's deadline, and
// code is COMMAND's exit code.
func startWatched(argv, env []string, stdout, stderr io.Writer, validUntil time.Time, margin time.Duration) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("the watchdog: finding redlease's own executable: %w", err)
	}
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("the watchdog: %w", err)
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		_, _ = ctlR.Close(), ctlW.Close()
		return nil, fmt.Errorf("the watchdog: %w", err)
	}
	cmd := exec.Command(self, append([]string{watchdogCmd, "--margin", margin.String(), "--"}, argv...)...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ctlR, stdout, stderr
	cmd.ExtraFiles = []*os.File{repW}
	// A group of its own: Ctrl-Z or SIGSTOP sent to redlease's group does
	// not stop the watchdog. No parent-death signal: it outlives redlease
	// to stop COMMAND.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = childWaitDelay
	w := &watchdogLink{ctl: ctlW}
	w.extend(validUntil) // before COMMAND starts; the pipe holds it
	err = cmd.Start()
	_, _ = ctlR.Close(), repW.Close()
	if err != nil {
		_, _ = ctlW.Close(), repR.Close()
		return nil, fmt.Errorf("the watchdog: %w", err)
	}
	return w.attach(cmd, bufio.NewReader(repR), repR)
}

// attach waits for the watchdog's first report (COMMAND's PID) and
// returns the child, whose done closes once the watchdog has exited.
func (w *watchdogLink) attach(cmd *exec.Cmd, rep *bufio.Reader, repR io.Closer) (*child, error) {
	kind, arg := readReport(rep)
	c := &child{cmd: cmd, done: make(chan struct{}), signal: w.signal, extend: w.extend, watchdog: w}
	if kind == "pid" {
		c.leader, _ = strconv.Atoi(arg)
	}
	go func() {
		defer close(c.done)
		for k, a := readReport(rep); k != ""; k, a = readReport(rep) {
			if k == "fired" {
				w.fired(a)
			}
		}
		_ = repR.Close()
		_ = cmd.Wait()
		c.code = exitCode(cmd.ProcessState)
		w.close()
	}()
	if kind != "pid" {
		<-c.done
		if kind == "expired" {
			return nil, errTermExpired
		}
		if kind != "error" {
			arg = fmt.Sprintf("the watchdog exited with code %d before starting it", c.code)
		}
		return nil, errors.New(arg)
	}
	return c, nil
}

// readReport reads one report of the watchdog: "" at its end.
func readReport(r *bufio.Reader) (kind, arg string) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", ""
	}
	kind, arg, _ = strings.Cut(strings.TrimSpace(line), " ")
	return kind, arg
}

// watchdogLink is the supervisor's end of the pipes to the watchdog. Safe
// for concurrent use.
type watchdogLink struct {
	mu     sync.Mutex
	ctl    *os.File // nil once closed
	killed watchdogKill
}

// extend tells the watchdog that the term is valid until validUntil. The
// clock is read before the time left, so a pause between the two moves
// the deadline earlier, never later.
func (w *watchdogLink) extend(validUntil time.Time) {
	now := monoNow()
	w.send(fmt.Sprintf("until %d\n", now+time.Until(validUntil)))
}

// signal has the watchdog send sig to COMMAND's group.
func (w *watchdogLink) signal(sig os.Signal) {
	s, ok := sig.(syscall.Signal)
	if !ok {
		s = syscall.SIGKILL
	}
	w.send(fmt.Sprintf("signal %d\n", int(s)))
}

// send writes msg, unless the pipe is closed (the watchdog exited).
func (w *watchdogLink) send(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctl != nil {
		_, _ = w.ctl.WriteString(msg) // EPIPE: the watchdog exited, and COMMAND with it
	}
}

func (w *watchdogLink) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.ctl.Close()
	w.ctl = nil
}

// fired records the watchdog's report "fired W L".
func (w *watchdogLink) fired(arg string) {
	at, left, _ := strings.Cut(arg, " ")
	ns, _ := strconv.ParseInt(at, 10, 64)
	l, _ := strconv.ParseInt(left, 10, 64)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.killed = watchdogKill{at: time.Unix(0, ns), left: time.Duration(l)}
}

// kill returns what the watchdog reported of a kill at the deadline.
func (w *watchdogLink) kill() watchdogKill {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.killed
}
