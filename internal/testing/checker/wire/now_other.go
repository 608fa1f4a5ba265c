//go:build !linux

package wire

import "time"

// start anchors Now where CLOCK_MONOTONIC cannot be read (the simulator's
// wasip1 build): Go's own monotonic reading, in nanoseconds since start.
var start = time.Now()

// Now reads the monotonic clock, in nanoseconds (here: Go's, since the
// package was initialised).
func Now() int64 { return int64(time.Since(start)) }
