package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/rediserr"
)

// markerKey is redlock's quarantine marker of a standalone node.
const markerKey = "{redlease}:marker"

// aclCommands are the commands redlease sends, at the top level and from
// its scripts (redlock/lua/*.lua), as ACL DRYRUN takes them, on the keys
// and the channel of the lock called name.
func aclCommands(name string) [][]any {
	key, fence, ch := name, name+":fence", name+":notice"
	sha := strings.Repeat("0", 40)
	return [][]any{
		{"evalsha", sha, "3", key, markerKey, fence}, {"eval", "return 1", "3", key, markerKey, fence},
		{"script", "load", "return 1"}, {"info", "server", "replication"}, {"time"}, {"ping"},
		{"publish", ch, "m"}, {"subscribe", ch},
		{"set", key, "v", "NX", "PX", "1000", "GET"}, {"get", key}, {"mget", key}, {"pttl", key},
		{"pexpire", key, "1000"}, {"pexpireat", key, "1"}, {"del", key},
		{"incr", fence}, {"set", fence, "1", "PX", "1000"}, {"get", fence}, {"pexpire", fence, "1000"},
		{"hget", markerKey, "h"}, {"hmget", markerKey, "r", "c"}, {"hset", markerKey, "h", "1"},
	}
}

// acl checks that the ACL allows every command redlease sends on the keys
// of cfg.Name: with ACL DRYRUN where the server has it and the user may
// run it, else by trying them (tryACL).
func acl(ctx context.Context, cfg *Config, c redis.UniversalClient) Finding {
	user := cfg.ACLUser
	if user == "" {
		u, err := c.Do(ctx, "ACL", "WHOAMI").Text()
		if cl, ok := rediserr.Of(err); ok && cl == rediserr.Unsupported {
			return Finding{ID: CheckACL, Severity: OK, Found: "no ACL on this server: every command allowed"}
		}
		user = u // "" when refused: DRYRUN is refused too
	}
	var denied []string
	cmds := aclCommands(cfg.Name)
	for _, cmd := range cmds {
		res, err := c.Do(ctx, append([]any{"ACL", "DRYRUN", user}, cmd...)...).Text()
		if err != nil {
			return tryACL(ctx, cfg, c, fmt.Sprintf("ACL DRYRUN failed (%v)", err))
		}
		if res != "OK" {
			denied = append(denied, fmt.Sprintf("%s (%s)", cmdName(cmd), res))
		}
	}
	found := fmt.Sprintf("ACL DRYRUN for user %q: the %d commands redlease sends on %s", user, len(cmds), keysText(cfg.Name))
	return aclFinding(found, user, denied)
}

func keysText(name string) string {
	return fmt.Sprintf("%s, %s:fence, %s:notice and %s", name, name, name, markerKey)
}

// cmdName is a command's name with its subcommand and first key.
func cmdName(cmd []any) string {
	name := strings.ToUpper(fmt.Sprint(cmd[0]))
	switch {
	case name == "SCRIPT" || name == "INFO":
		return name + " " + strings.ToUpper(fmt.Sprint(cmd[1]))
	case name == "EVAL" || name == "EVALSHA":
		return name
	case len(cmd) > 1:
		return fmt.Sprintf("%s %v", name, cmd[1])
	}
	return name
}

// aclFinding is the finding of a check that found denied commands, or none.
func aclFinding(found, user string, denied []string) Finding {
	if len(denied) == 0 {
		return Finding{ID: CheckACL, Severity: OK, Found: found + ": all allowed"}
	}
	return Finding{ID: CheckACL, Severity: Fail, Found: found + ": denied: " + strings.Join(denied, "; "),
		Risk: "the node refuses redlease: New fails, or acquisitions stop with ErrAccessDenied",
		Fix:  fmt.Sprintf("grant them to %s: the rule is in SECURITY.md (ACL SETUSER ... with ~PREFIX* ~%s &PREFIX*:notice)", userText(user), markerKey)}
}

func userText(user string) string {
	if user == "" {
		return "the nodes' user"
	}
	return fmt.Sprintf("user %q", user)
}
