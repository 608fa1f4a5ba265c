package logx

import "time"

// RoundDuration rounds d for a person to read: to 3 significant digits,
// but never coarser than a millisecond (172.333333ms is 172ms, 1.23456ms
// is 1.23ms, 350.123µs is 350µs, 9.4123s is 9.412s). Every duration the
// loggers of Flat and FromSlog are given is written so; the CLI rounds the
// durations of its messages with it too.
func RoundDuration(d time.Duration) time.Duration {
	a := d
	if a < 0 {
		a = -a
	}
	unit := time.Millisecond
	for u := time.Duration(1); u < unit; u *= 10 {
		if a < u*1000 { // 3 digits of u: round to u
			unit = u
			break
		}
	}
	return d.Round(unit)
}
