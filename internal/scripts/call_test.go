package scripts

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A call's command line: EVALSHA, the digest, the keys and the arguments;
// the same call on other keys; the EVAL line with the source.
func TestCallArgv(t *testing.T) {
	sc := NewCall(Release, []string{"k"}, "v", "ch", "msg", "0")
	assert.Equal(t, []any{"evalsha", Release.Hash(), 1, "k", "v", "ch", "msg", "0"}, sc.Argv())
	assert.Equal(t, Release, sc.Script())
	assert.Equal(t, 1, sc.NKeys())
	assert.Equal(t, []string{"k"}, sc.Keys())

	other := sc.WithKeys("{t}:k")
	assert.Equal(t, []any{"evalsha", Release.Hash(), 1, "{t}:k", "v", "ch", "msg", "0"}, other.Argv())
	assert.Equal(t, []any{"evalsha", Release.Hash(), 1, "k", "v", "ch", "msg", "0"}, sc.Argv(), "the call itself is unchanged")

	assert.Equal(t, []any{"eval", Source(Release), 1, "k", "v", "ch", "msg", "0"}, sc.EvalArgv())
	assert.Equal(t, "evalsha", sc.Argv()[0], "EvalArgv copies the line")
}

// A command line longer than a Call keeps inline has its own storage.
func TestCallLong(t *testing.T) {
	keys := []string{"m", "a", "b", "c", "d", "e", "f"}
	sc := NewCall(ExtendMany, keys, "1", "2", "3", "4", "5", "6")
	assert.Len(t, sc.Argv(), 3+len(keys)+6)
	assert.Equal(t, keys, sc.Keys())
	other := sc.WithKeys("M", "A", "B", "C", "D", "E", "F")
	assert.Equal(t, []string{"M", "A", "B", "C", "D", "E", "F"}, other.Keys())
	assert.Equal(t, sc.Argv()[3+len(keys):], other.Argv()[3+len(keys):])
}
