package redlock

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Unexported values that the external tests (package redlock_test) use.
const (
	ConfStale = confStale
)

// FenceDigest is the SHA1 digest of the fencing write-back script, so that
// tests can count its calls.
var FenceDigest = scriptFence.Hash()

// RunAcquireScript runs the acquire script once on c, as one attempt of
// value on key would (quarantine on, fencing on), and returns its reply.
func RunAcquireScript(ctx context.Context, c redis.UniversalClient, key, value string, ttl, maxTTL time.Duration) ([]any, error) {
	sc := newCall(scriptAcquire, []string{key, key + ":fence", markerKey}, value, ttl.Milliseconds(), maxTTL.Milliseconds(),
		"1", strconv.FormatInt(CounterTTLFactor*maxTTL.Milliseconds(), 10), "0")
	res, err := sc.run(ctx, c)
	if err != nil {
		return nil, err
	}
	a, _ := res.([]any)
	return a, nil
}
