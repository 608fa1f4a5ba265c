//go:build unix

package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// watchdogCmd is the hidden command that `redlease run` re-executes itself
// with to start COMMAND under a watchdog (see startWatched). It is not for
// people: its interface may change with any release.
const watchdogCmd = "_watchdog"

// The watchdog is the parent of COMMAND, a process of its own between
// `redlease run` (the supervisor) and COMMAND, that kills COMMAND's
// process group when the term's validity is about to end unless the
// supervisor has extended it: a frozen supervisor (SIGSTOP, a stalled VM)
// cannot keep its command running past its term. Its protocol, one line
// per message:
//
//	supervisor -> watchdog (its stdin):
//	  until N    the term is valid until N ns on CLOCK_MONOTONIC; the
//	             first line comes before COMMAND starts
//	  signal S   send signal S to COMMAND's group
//	watchdog -> supervisor (fd 3):
//	  pid P      COMMAND started, with PID (and process group) P
//	  error E    COMMAND could not start; the watchdog exits 127
//	  expired    the first deadline had passed: COMMAND was not started
//	  fired W L  the watchdog killed COMMAND's group at W (Unix ns), L ns
//	             before the validity it was told ended
//
// It exits with COMMAND's exit code when COMMAND has exited. When its
// stdin closes (the supervisor died) it sends SIGTERM to COMMAND's group
// at once, and still SIGKILL at the deadline. The deadline is an absolute
// reading of the clock every process of the host shares, so a supervisor
// paused between reading its term's validity and writing it cannot move
// the deadline later; the watchdog kills --margin before it, to cover its
// own latency.
func cmdWatchdog(args []string, out *outputs) int {
	fs := flag.NewFlagSet("redlease "+watchdogCmd, flag.ContinueOnError)
	fs.SetOutput(out.err)
	margin := fs.Duration("margin", 0, "kill COMMAND this long before the deadline")
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 || *margin < 0 {
		fmt.Fprintf(out.err, "redlease %s: internal command of redlease run, not to be run by hand\n", watchdogCmd)
		return exitUsage
	}
	// Signals meant for redlease and COMMAND (systemd sends SIGTERM to
	// every process of the service; a closed terminal, SIGHUP) must not
	// end the watchdog, whose death kills COMMAND at once (pdeathsig):
	// redlease forwards them, and a dead redlease closes the pipe. They
	// are caught, not ignored, so that COMMAND gets their default actions.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	report := os.NewFile(3, "report")
	syscall.CloseOnExec(3) // COMMAND must not hold the report pipe
	w := &watchdog{margin: *margin, report: report, log: out.logger(hclog.Info, false).Named("watchdog")}
	return w.run(fs.Args(), bufio.NewReader(os.Stdin))
}

type watchdog struct {
	margin time.Duration
	report io.Writer
	log    hclog.Logger
}

// ctlMsg is one message of the supervisor; eof when its pipe closed.
type ctlMsg struct {
	until time.Duration // CLOCK_MONOTONIC
	sig   syscall.Signal
	eof   bool
}

func (w *watchdog) run(argv []string, ctl *bufio.Reader) int {
	first, err := readCtl(ctl)
	if err != nil || first.until == 0 {
		fmt.Fprintf(w.report, "error no deadline from redlease: %v\n", err)
		return exitNoStart
	}
	if first.until-w.margin <= monoNow() { // redlease paused before it started the watchdog
		fmt.Fprintf(w.report, "expired\n")
		return exitNoStart
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = sysProcAttr() // a group of its own; killed if the watchdog dies
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(w.report, "error %s\n", strings.ReplaceAll(err.Error(), "\n", "; "))
		return exitNoStart
	}
	pid := cmd.Process.Pid
	fmt.Fprintf(w.report, "pid %d\n", pid)
	msgs := make(chan ctlMsg)
	go readAll(ctl, msgs)
	done := make(chan int, 1)
	go func() {
		_ = cmd.Wait()
		killGroup(pid) // what COMMAND left behind goes with it
		done <- exitCode(cmd.ProcessState)
	}()
	return w.guard(pid, first.until, msgs, done)
}

// guard kills pid's group at the deadline (less the margin), moving the
// deadline as the supervisor extends it, until COMMAND has exited; it
// returns COMMAND's exit code.
func (w *watchdog) guard(pid int, until time.Duration, msgs <-chan ctlMsg, done <-chan int) int {
	timer := time.NewTimer(until - w.margin - monoNow())
	defer timer.Stop()
	fired := false
	for {
		select {
		case code := <-done:
			return code
		case m := <-msgs:
			switch {
			case m.eof:
				msgs = nil // no more extensions: stop COMMAND, kill it at the deadline
				signalGroup(pid, syscall.SIGTERM)
			case m.sig != 0:
				signalGroup(pid, m.sig)
			case !fired:
				until = m.until
				timer.Reset(until - w.margin - monoNow())
			}
		case <-timer.C:
			fired = true
			signalGroup(pid, syscall.SIGKILL)
			left := until - monoNow()
			fmt.Fprintf(w.report, "fired %d %d\n", time.Now().UnixNano(), left)
			w.log.Error("the term's validity is ending and redlease has not extended it (paused or stalled?): killed the command's group",
				"pid", pid, "validity_left", left)
		}
	}
}

// readAll sends the supervisor's messages to msgs until its pipe closes
// (or says what the watchdog cannot read: it then acts as if closed).
func readAll(ctl *bufio.Reader, msgs chan<- ctlMsg) {
	for {
		m, err := readCtl(ctl)
		if err != nil {
			msgs <- ctlMsg{eof: true}
			return
		}
		msgs <- m
	}
}

// readCtl reads one message of the supervisor.
func readCtl(r *bufio.Reader) (ctlMsg, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return ctlMsg{}, err
	}
	kind, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	n, err := strconv.ParseInt(arg, 10, 64)
	switch {
	case err != nil:
		return ctlMsg{}, fmt.Errorf("bad message %q: %w", line, err)
	case kind == "until" && n > 0:
		return ctlMsg{until: time.Duration(n)}, nil
	case kind == "signal" && n > 0:
		return ctlMsg{sig: syscall.Signal(n)}, nil
	}
	return ctlMsg{}, errors.New("bad message " + strconv.Quote(line))
}
