package scripts

import (
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
)

// Every script has its source, its name and its commands, and its digest
// is its source's.
func TestCatalogue(t *testing.T) {
	names := map[string]bool{}
	for _, s := range All {
		name := Name(s)
		assert.NotEmpty(t, name)
		assert.False(t, names[name], "%s named twice", name)
		names[name] = true
		assert.NotEmpty(t, Commands(s), name)
		assert.Equal(t, redis.NewScript(Source(s)).Hash(), s.Hash(), name)
	}
	assert.Len(t, catalogue, len(All), "every script is in All")
	assert.Len(t, entries, len(All), "every script is a function of the library")
	assert.Empty(t, Source(redis.NewScript("return 1")), "not a script of this package")
}
