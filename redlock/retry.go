package redlock

import (
	"time"

	"github.com/redlease/redlease/internal/backoff"
)

// RetryStrategy decides how long [Client.Acquire] waits before its next
// attempt. A strategy is made fresh for every Acquire call (see
// Config.Retry), so it may count attempts; it is used by one goroutine.
type RetryStrategy interface {
	// NextDelay returns the delay before the next attempt, or false to
	// stop retrying.
	NextDelay() (time.Duration, bool)
}

// RetryFunc adapts a function to [RetryStrategy].
type RetryFunc func() (time.Duration, bool)

// NextDelay calls f.
func (f RetryFunc) NextDelay() (time.Duration, bool) { return f() }

// JitterRetry waits a uniformly random delay in [mean/2, mean*3/2] between
// attempts, until the context ends, without backing off.
func JitterRetry(mean time.Duration) func() RetryStrategy {
	return func() RetryStrategy {
		return RetryFunc(func() (time.Duration, bool) { return backoff.Jitter(mean), true })
	}
}

// expRetry is the default strategy (see Config.RetryDelay): exponential
// backoff with jitter from first, capped at 8 * first.
func expRetry(first time.Duration) func() RetryStrategy {
	return func() RetryStrategy {
		b := &backoff.Exp{Base: first}
		return RetryFunc(func() (time.Duration, bool) { return b.Next(), true })
	}
}

// LimitRetry stops after n retries of the strategies made by next.
func LimitRetry(n int, next func() RetryStrategy) func() RetryStrategy {
	return func() RetryStrategy {
		s, left := next(), n
		return RetryFunc(func() (time.Duration, bool) {
			if left <= 0 {
				return 0, false
			}
			left--
			return s.NextDelay()
		})
	}
}

// NoRetry makes Acquire give up after its first attempt.
func NoRetry() func() RetryStrategy { return LimitRetry(0, JitterRetry(0)) }
