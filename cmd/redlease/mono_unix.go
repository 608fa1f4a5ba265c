//go:build unix

package main

import (
	"time"

	"golang.org/x/sys/unix"
)

// monoNow reads CLOCK_MONOTONIC, the clock every process of the host
// shares (Go's own monotonic readings count from each process's start):
// `redlease run` tells its watchdog the term's deadline on it.
func monoNow() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("redlease: CLOCK_MONOTONIC cannot be read: " + err.Error()) // never on a supported system
	}
	return time.Duration(ts.Nano())
}
