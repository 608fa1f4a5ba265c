package readme_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quoted are the functions of example_test.go that each page quotes: the
// README's tour, and docs/observability.md's snippets (moved there from
// the README, #33).
var quoted = map[string][]string{
	"../../README.md":             {"serve", "watchLeader", "leaseJob", "nightlyReports"},
	"../../docs/observability.md": {"slogClient", "Example_health"},
}

// Each page quotes its snippets exactly as they are here, where they run.
func TestREADMEQuotesExamples(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	for page, names := range quoted {
		doc, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, name := range names {
			fn := function(t, string(src), name)
			assert.True(t, strings.Contains(string(doc), "```go\n"+fn+"```\n"),
				"%s does not quote %s as example_test.go has it:\n%s", page, name, fn)
		}
	}
}

// function returns the source of the top-level function name, from its
// "func" line to its closing brace and newline.
func function(t *testing.T, src, name string) string {
	i := strings.Index(src, "\nfunc "+name+"(")
	require.GreaterOrEqual(t, i, 0, "func %s in example_test.go", name)
	j := strings.Index(src[i:], "\n}\n")
	require.GreaterOrEqual(t, j, 0)
	return src[i+1 : i+j+3]
}
