package wire

import "golang.org/x/sys/unix"

// Now reads CLOCK_MONOTONIC, in nanoseconds.
func Now() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	return ts.Nano()
}
