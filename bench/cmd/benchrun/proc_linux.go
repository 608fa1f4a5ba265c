package main

import "syscall"

// childAttr makes a child die with the harness (redis-servers, the proxy
// process), even when the harness is killed without running its clean-up.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
