package redistest

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// InfoField returns the value of "name:value" in an INFO-style reply, ""
// when there is no such field.
func InfoField(info, name string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}

// InfoContains reports whether c answers INFO section with a reply that
// contains every one of want (false when it does not answer): the
// condition of a wait for a replication state.
func InfoContains(ctx context.Context, c redis.Cmdable, section string, want ...string) bool {
	info, err := c.Info(ctx, section).Result()
	if err != nil {
		return false
	}
	for _, w := range want {
		if !strings.Contains(info, w) {
			return false
		}
	}
	return true
}
