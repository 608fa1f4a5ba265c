package security

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// TestHolderSizeLimit: ID and Metadata must encode to at most
// notice.MaxHolderSize bytes (escaped, with their "id=" and "&m.k=" framing).
// At the limit a lease is taken and read back whole; one byte above, the
// error wraps ErrInvalidArgument, names both sizes, and nothing is sent.
func TestHolderSizeLimit(t *testing.T) {
	skipShort(t)
	ctx := context.Background()
	g := redistest.Start(t, 1)
	var nodes []redis.UniversalClient
	for _, c := range g.Clients(t) {
		nodes = append(nodes, c)
	}
	c, err := redlock.New(ctx, redlock.Config{NodeTimeout: nodeTimeout, Logger: testLogger(t)}, nodes...)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Bootstrap(ctx))

	const max = notice.MaxHolderSize
	for i, tc := range []struct {
		name string
		id   string
		md   map[string]string
		size int // encoded size; above max is refused
	}{
		{"ID at the limit", strings.Repeat("x", max-len("id=")), nil, max},
		{"ID one byte above", strings.Repeat("x", max-len("id=")+1), nil, max + 1},
		// "é" is two bytes, escaped to six ("%C3%A9").
		{"escaped metadata at the limit", "a",
			map[string]string{"k": strings.Repeat("é", (max-len("id=a&m.k="))/6) + strings.Repeat("v", (max-len("id=a&m.k="))%6)}, max},
		{"escaped metadata above", "a", map[string]string{"k": strings.Repeat("é", (max-len("id=a&m.k="))/6+1)}, 4101},
		{"many small keys above", "a", manyKeys(500), len("id=a") + 500*len("&m.k000=v")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "size:" + strconv.Itoa(i)
			cfg := lease.Config{TTL: 5 * time.Second, ID: tc.id, Metadata: tc.md}
			l, err := lease.TryAcquire(ctx, c, key, cfg)
			if tc.size <= max {
				require.NoError(t, err)
				defer l.Release(ctx)
				info, err := c.Inspect(ctx, key)
				require.NoError(t, err)
				assert.Equal(t, tc.id, info.ID)
				assert.Equal(t, len(tc.md), len(info.Metadata))
				assert.Equal(t, tc.md["k"], info.Metadata["k"])
				return
			}
			require.ErrorIs(t, err, redlock.ErrInvalidArgument)
			assert.Nil(t, l)
			assert.Contains(t, err.Error(), "ID and Metadata encode to "+strconv.Itoa(tc.size)+" bytes, above the limit of 4096")
			assert.Zero(t, nodes[0].Exists(ctx, key).Val(), "nothing was written")
		})
	}
}

func manyKeys(n int) map[string]string {
	md := make(map[string]string, n)
	for i := range n {
		md["k"+strconv.Itoa(1000 + i)[1:]] = "v"
	}
	return md
}
