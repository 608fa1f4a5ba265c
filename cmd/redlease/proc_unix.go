//go:build unix

package main

import (
	"os"
	"syscall"
)

// sysProcAttr puts the child in a process group of its own (see child),
// and on Linux has the kernel kill it if its parent (the watchdog, or
// redlease) dies (see pdeathsig).
func sysProcAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	pdeathsig(a)
	return a
}

// signalGroup sends sig to the process group led by pid.
func signalGroup(pid int, sig os.Signal) {
	s, ok := sig.(syscall.Signal)
	if !ok {
		s = syscall.SIGKILL
	}
	_ = syscall.Kill(-pid, s) // ESRCH: the group is gone already
}

// killGroup kills what is left of the process group led by pid.
func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL) // ESRCH, the usual case: nothing left
}

// exitCode is a child's exit code, 128+S when signal S killed it, as
// shells report it.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}
