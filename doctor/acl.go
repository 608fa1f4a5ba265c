package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/rediserr"
)

// aclCommands are the commands redlease sends, at the top level and from
// its scripts (internal/scripts/lua/*.lua), as ACL DRYRUN takes them, on the keys
// and the channel of the lock called name, in sc (a cluster client also
// reads the slot map and the command table, and follows ASK redirects).
func aclCommands(sc scope, name string) [][]any {
	key, ch, marker := sc.key(name), sc.channel(name), sc.marker()
	fence := key + ":fence"
	sha := strings.Repeat("0", 40)
	cmds := [][]any{
		{"evalsha", sha, "3", key, marker, fence}, {"eval", "return 1", "3", key, marker, fence},
		{"script", "load", "return 1"}, {"info", "server", "replication"}, {"time"}, {"ping"},
		{sc.publish(), ch, "m"}, {sc.subscribe(), ch},
		{"set", key, "v", "NX", "PX", "1000", "GET"}, {"get", key}, {"mget", key}, {"pttl", key},
		{"pexpire", key, "1000"}, {"pexpireat", key, "1"}, {"del", key},
		{"incr", fence}, {"set", fence, "1", "PX", "1000"}, {"get", fence}, {"pexpire", fence, "1000"},
		{"hget", marker, "h"}, {"hmget", marker, "r", "c"}, {"hset", marker, "h", "1"},
	}
	if sc.cluster {
		cmds = append(cmds, []any{"cluster", "slots"}, []any{"command"}, []any{"asking"})
	}
	return cmds
}

// acl checks that the ACL allows every command redlease sends on the keys
// of cfg.Name: with ACL DRYRUN where the server has it and the user may
// run it, else by trying them (tryACL).
func acl(ctx context.Context, cfg *Config, sc scope, c redis.UniversalClient) Finding {
	user := cfg.ACLUser
	if user == "" {
		u, err := c.Do(ctx, "ACL", "WHOAMI").Text()
		if cl, ok := rediserr.Of(err); ok && cl == rediserr.Unsupported {
			return Finding{ID: CheckACL, Severity: OK, Found: "no ACL on this server: every command allowed"}
		}
		user = u // "" when refused: DRYRUN is refused too
	}
	var denied []string
	cmds := aclCommands(sc, cfg.Name)
	for _, cmd := range cmds {
		res, err := c.Do(ctx, append([]any{"ACL", "DRYRUN", user}, cmd...)...).Text()
		if err != nil {
			return tryACL(ctx, cfg, sc, c, fmt.Sprintf("ACL DRYRUN failed (%v)", err))
		}
		if res != "OK" {
			denied = append(denied, fmt.Sprintf("%s (%s)", cmdName(cmd), res))
		}
	}
	found := fmt.Sprintf("ACL DRYRUN for user %q: the %d commands redlease sends on %s", user, len(cmds), keysText(sc, cfg.Name))
	return aclFinding(found, user, denied)
}

func keysText(sc scope, name string) string {
	key := sc.key(name)
	return fmt.Sprintf("%s, %s:fence, %s and %s", key, key, sc.channel(name), sc.marker())
}

// cmdName is a command's name with its subcommand and first key.
func cmdName(cmd []any) string {
	name := strings.ToUpper(fmt.Sprint(cmd[0]))
	switch {
	case name == "SCRIPT" || name == "INFO" || name == "CLUSTER":
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
