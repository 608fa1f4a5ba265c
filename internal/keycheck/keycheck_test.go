package keycheck

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProblem(t *testing.T) {
	assert.Empty(t, Problem("key", "jobs/42"))
	assert.Empty(t, Problem("key", strings.Repeat("k", MaxSize)))
	assert.Equal(t, "key must not be empty", Problem("key", ""))

	huge := strings.Repeat("x", 64<<20) // 64 MiB
	p := Problem("key", huge)
	assert.Less(t, len(p), 200, "the error quotes a truncated key: %s", p)
	assert.Contains(t, p, `"`+strings.Repeat("x", 64)+`"... (67108800 more bytes)`)
	assert.Contains(t, p, "67108864 bytes, above the limit of 4096")
}

func TestQuoteCutsAtCharacterBoundary(t *testing.T) {
	k := strings.Repeat("a", 63) + "é" + strings.Repeat("b", 10) // é straddles byte 64
	assert.Equal(t, `"`+strings.Repeat("a", 63)+`"... (12 more bytes)`, Quote(k))
	assert.Equal(t, `"short"`, Quote("short"))
}
