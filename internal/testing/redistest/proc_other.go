//go:build !linux

package redistest

import "syscall"

// sysProcAttr returns nil: outside Linux there is no parent-death signal,
// so a test binary that dies without cleanup leaves redis-server running.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// waitStopped returns at once: outside Linux, SIGSTOP takes effect
// asynchronously (in practice within microseconds).
func waitStopped(*process) error { return nil }
