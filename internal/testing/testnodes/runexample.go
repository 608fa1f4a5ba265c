package testnodes

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// RunExample runs an example program's run with a context that ends
// after timeout, requires it to return nil, logs what it wrote to t and
// returns it.
func RunExample(t testing.TB, timeout time.Duration, run func(ctx context.Context, out io.Writer) error) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out bytes.Buffer
	start := time.Now()
	err := run(ctx, &out)
	t.Logf("%s(in %s)", out.String(), time.Since(start))
	require.NoError(t, err)
	return out.String()
}
