package redlock

import (
	"time"

	"github.com/redlease/redlease/internal/backoff"
)

// retryPolicy returns the delay before the next attempt of
// [Client.Acquire] after attempt attempts failed (attempt >= 1), or false
// to stop retrying (see [WithRetry]).
type retryPolicy = func(attempt int) (delay time.Duration, ok bool)

// expRetry is the default policy (see Config.RetryDelay): exponential
// backoff with jitter from first, capped at 8 * first, never giving up.
func expRetry(first time.Duration) retryPolicy {
	return func(attempt int) (time.Duration, bool) {
		d, limit := first, 8*first
		for i := 1; i < attempt && d < limit; i++ {
			d *= backoff.Factor
		}
		return backoff.Jitter(min(d, limit)), true
	}
}
