//go:build unix && !linux

package main

import "syscall"

// pdeathsig does nothing where the kernel offers no parent-death signal:
// if redlease is killed with SIGKILL, its command runs on (see README).
func pdeathsig(*syscall.SysProcAttr) {}
