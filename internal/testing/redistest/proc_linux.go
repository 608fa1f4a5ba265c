package redistest

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// sysProcAttr makes the kernel SIGKILL redis-server if the test binary dies
// without running its cleanups (e.g. on a test timeout). Pdeathsig fires when
// the OS thread that started the process exits; the Go runtime only retires
// threads of goroutines that exit while locked with runtime.LockOSThread.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// waitStopped waits until /proc reports pr as stopped after a SIGSTOP, so
// that Pause is in effect when it returns.
func waitStopped(pr *process) error {
	path := "/proc/" + strconv.Itoa(pr.p.Pid) + "/stat"
	deadline := time.Now().Add(readyTimeout)
	for {
		stat, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("redistest: pause pid %d: %w", pr.p.Pid, err)
		}
		// The state field follows the parenthesised command name.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'T' {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: pause pid %d: not stopped within %v", pr.p.Pid, readyTimeout)
		}
		select {
		case <-pr.done:
			return fmt.Errorf("redistest: pause pid %d: process exited", pr.p.Pid)
		case <-time.After(time.Millisecond):
		}
	}
}
