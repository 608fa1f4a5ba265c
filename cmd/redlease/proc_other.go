//go:build !unix

package main

import (
	"os"
	"syscall"
)

// sysProcAttr: no process groups here; the child alone is signalled.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// signalGroup signals the child; where sig cannot be sent (SIGTERM on
// Windows), it kills the child.
func signalGroup(pid int, sig os.Signal) {
	p, err := os.FindProcess(pid)
	if err != nil {
		return
	}
	if p.Signal(sig) != nil {
		_ = p.Kill()
	}
}

// killGroup does nothing: there is no group to kill.
func killGroup(int) {}

// exitCode is the child's exit code.
func exitCode(ps *os.ProcessState) int { return ps.ExitCode() }
