package scripts

import (
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
)

// Every script has its source, its name and its commands, and its digest
// is its source's.
func TestCatalogue(t *testing.T) {
	all := []*redis.Script{Acquire, Fence, Extend, ExtendMany, Release, Probe, Raise, Inspect, Settle, RestoreMany}
	names := map[string]bool{}
	for _, s := range all {
		name := Name(s)
		assert.NotEmpty(t, name)
		assert.False(t, names[name], "%s named twice", name)
		names[name] = true
		assert.NotEmpty(t, Commands(s), name)
		assert.Equal(t, redis.NewScript(Source(s)).Hash(), s.Hash(), name)
	}
	assert.Len(t, catalogue, len(all), "every script is listed above")
	assert.Empty(t, Source(redis.NewScript("return 1")), "not a script of this package")
}
