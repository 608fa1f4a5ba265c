package redlock

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// TestFirstLine: a refusal's reason in the mode's log line is one line of
// at most 120 bytes (miniredis quotes the whole library in its error).
func TestFirstLine(t *testing.T) {
	assert.Equal(t, "ERR unknown command", firstLine("ERR unknown command"))
	assert.Equal(t, "ERR a...", firstLine("ERR a\nlibrary text"))
	long := strings.Repeat("é", 100) // 200 bytes
	got := firstLine(long)
	assert.Equal(t, strings.Repeat("é", 60)+"...", got)
	assert.True(t, utf8.ValidString(got))
}
