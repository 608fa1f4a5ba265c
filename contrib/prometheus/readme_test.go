package redleaseprom_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/observability.md's "Metrics" snippet (the README's until #33) is
// ExampleNew's body, up to its Output comment and one tab less indented,
// exactly as example_test.go has it.
func TestREADMEQuotesExampleNew(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	readme, err := os.ReadFile("../../docs/observability.md")
	require.NoError(t, err)
	s := string(src)
	head := "\nfunc ExampleNew() {\n"
	i := strings.Index(s, head)
	require.GreaterOrEqual(t, i, 0, "func ExampleNew in example_test.go")
	s = s[i+len(head):]
	j := strings.Index(s, "\t// Output:")
	require.GreaterOrEqual(t, j, 0, "ExampleNew's Output comment")
	lines := strings.SplitAfter(s[:j], "\n")
	for k, l := range lines {
		lines[k] = strings.TrimPrefix(l, "\t")
	}
	body := strings.Join(lines, "")
	assert.True(t, strings.Contains(string(readme), "```go\n"+body+"```\n"),
		"docs/observability.md does not quote ExampleNew's body as example_test.go has it:\n%s", body)
}
