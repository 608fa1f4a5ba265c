package readme_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quoted are the functions of example_test.go that the README quotes.
var quoted = []string{"serve", "watchLeader", "leaseJob", "nightlyReports", "slogClient", "Example_health"}

// The README quotes each snippet exactly as it is here, where it runs.
func TestREADMEQuotesExamples(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	for _, name := range quoted {
		fn := function(t, string(src), name)
		assert.True(t, strings.Contains(string(readme), "```go\n"+fn+"```\n"),
			"README.md does not quote %s as example_test.go has it:\n%s", name, fn)
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
