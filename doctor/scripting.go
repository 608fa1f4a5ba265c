package doctor

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/rediserr"
)

// scripting runs a Lua script: every operation of redlease is one (EVALSHA,
// then EVAL). FUNCTION is reported, not needed.
func scripting(ctx context.Context, c redis.UniversalClient) Finding {
	err := c.Eval(ctx, "return 1", nil).Err()
	if err == nil {
		found := "EVAL runs Lua scripts"
		if c.Do(ctx, "FUNCTION", "STATS").Err() == nil {
			found += "; FUNCTION available (not used by redlease)"
		}
		return Finding{ID: CheckScripting, Severity: OK, Found: found}
	}
	f := Finding{ID: CheckScripting, Severity: Fail, Found: "EVAL failed: " + err.Error(),
		Risk: "every lock operation is a Lua script: this node can never vote",
		Fix:  "a server with Lua scripting (Redis 7+, Valkey)"}
	if rediserr.Denied(err) {
		f.Fix = "grant +eval +evalsha (see the acl finding)"
	}
	return f
}
