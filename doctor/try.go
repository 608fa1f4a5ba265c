package doctor

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/rediserr"
)

//go:embed try.lua
var trySource string

var tryScript = redis.NewScript(trySource)

// subscribeWait bounds the wait for a SUBSCRIBE's answer.
const subscribeWait = 2 * time.Second

// tryACL checks the ACL by sending the commands, where ACL DRYRUN cannot
// be used (why says why): the top-level ones for real, on a scratch key
// (NAME:doctor-scratch, which expires within a second), and those of the
// scripts from a script of its own (try.lua). It reads the marker but
// does not write it: that would start a quarantine.
func tryACL(ctx context.Context, cfg *Config, sc scope, c redis.UniversalClient, why string) Finding {
	scratch := sc.key(cfg.Name) + ":doctor-scratch"
	keys, ch := []string{scratch, scratch + ":fence", sc.marker()}, sc.channel(cfg.Name)
	pub := strings.ToUpper(sc.publish())
	var denied []string
	deny := func(what string, err error) {
		if rediserr.Denied(err) {
			denied = append(denied, fmt.Sprintf("%s (%v)", what, err))
		}
	}
	deny("INFO server", c.Info(ctx, "server").Err())
	deny("SCRIPT LOAD", tryScript.Load(ctx, c).Err())
	deny(pub+" "+ch, c.Do(ctx, pub, ch, "doctor").Err())
	deny(strings.ToUpper(sc.subscribe())+" "+ch, subscribe(ctx, sc, c, ch))
	inner, err := c.EvalSha(ctx, tryScript.Hash(), keys, ch, pub).StringSlice()
	deny("EVALSHA", err)
	if err != nil {
		inner, err = c.Eval(ctx, trySource, keys, ch, pub).StringSlice()
		deny("EVAL", err)
	}
	denied = append(denied, inner...)
	found := fmt.Sprintf("%s; tried the commands instead on %s (HSET on the marker not tried: it would start a quarantine)", why, keysText(sc, cfg.Name))
	f := aclFinding(found, "", denied)
	if f.Severity == OK {
		f.Severity = Info
	}
	return f
}

// subscribe subscribes to ch (SSUBSCRIBE on a cluster) and waits for the
// answer.
func subscribe(ctx context.Context, sc scope, c redis.UniversalClient, ch string) error {
	ctx, cancel := context.WithTimeout(ctx, subscribeWait)
	defer cancel()
	var ps *redis.PubSub
	if sc.cluster {
		ps = c.SSubscribe(ctx, ch)
	} else {
		ps = c.Subscribe(ctx, ch)
	}
	defer ps.Close()
	_, err := ps.Receive(ctx)
	return err
}
