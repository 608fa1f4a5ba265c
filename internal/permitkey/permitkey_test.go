package permitkey

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestKey(t *testing.T) {
	assert.Equal(t, "{q}jobs", Key("{q}jobs", 0), "permit 0 is the name: a plain lock is a semaphore of one")
	assert.Equal(t, "{q}jobs:permit:7", Key("{q}jobs", 7), "the name's hash tag is every permit's")
}

func TestIndex(t *testing.T) {
	for key, want := range map[string]int{"jobs": 0, "jobs:permit:1": 1, "jobs:permit:1023": 1023} {
		i, ok := Index("jobs", key)
		assert.True(t, ok, key)
		assert.Equal(t, want, i, key)
	}
	for _, key := range []string{"jobs:permit:0", "jobs:permit:01", "jobs:permit:+1", "jobs:permit:-1", "jobs:permit:", "other", "jobs:permit:1x"} {
		_, ok := Index("jobs", key)
		assert.False(t, ok, key)
	}
}

func TestProblem(t *testing.T) {
	assert.Empty(t, Problem("Permits", "jobs", 0))
	assert.Empty(t, Problem("Permits", "jobs", Max))
	assert.Equal(t, "Permits (-1) must be between 0 and 1024", Problem("Permits", "jobs", -1))
	assert.Equal(t, "Permits (1025) must be between 0 and 1024", Problem("Permits", "jobs", Max+1))
	assert.Contains(t, Problem("Permits", strings.Repeat("k", 4090), 20), "permit 19 of the semaphore: key ")
	assert.Empty(t, Problem("Permits", strings.Repeat("k", 4096), 1), "one permit: the name itself")
}
