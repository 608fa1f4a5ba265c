package rediserr

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// replyErr is an error reply as go-redis reports it (proto.RedisError).
type replyErr string

func (e replyErr) Error() string { return string(e) }
func (replyErr) RedisError()     {}

// TestClassifyReplies: every code redlease knows, in the wording of Redis
// 7.0 and in that of Redis 7.2+ / Valkey 8 where it differs (taken from
// the servers' replies and binaries), gets its class; the class alone says
// whether it is final.
func TestClassifyReplies(t *testing.T) {
	for _, tc := range replyCases {
		t.Run(tc.reply, func(t *testing.T) {
			wrapped := fmt.Errorf("acquire script on keys a, b: %w", replyErr(tc.reply))
			for _, err := range []error{replyErr(tc.reply), wrapped, Classify(replyErr(tc.reply))} {
				got := Classify(err)
				re, ok := errors.AsType[*ReplyError](got)
				require.True(t, ok, "%v: classified", err)
				assert.Equal(t, tc.code, re.Code)
				assert.Equal(t, tc.class, re.Class, "class %v, want %v", re.Class, tc.class)
				assert.Equal(t, err.Error(), got.Error(), "the message is kept as it is")
				assert.ErrorIs(t, got, err)
				assert.Equal(t, tc.class.Final(), Final(err))
			}
			_, class := ClassifyText(tc.reply)
			assert.Equal(t, tc.class, class, "the same text as a script returns it")
		})
	}
}

// replyCase is a server's reply and what it is classified as.
type replyCase struct {
	reply string // the server's reply, without the leading '-'
	code  string
	class Class
}

// replyCases are every code redlease knows, in the wordings of the
// servers, and some it does not.
var replyCases = []replyCase{
	// Transient states: retryable.
	{"READONLY You can't write against a read only replica.", "READONLY", Transient},
	{"READONLY Can not run script with write flag on readonly replica", "READONLY", Transient},
	{"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", "MASTERDOWN", Transient},
	{"LOADING Redis is loading the dataset in memory", "LOADING", Transient},
	{"LOADING Valkey is loading the dataset in memory", "LOADING", Transient},
	{"BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.", "BUSY", Transient},
	{"BUSY Valkey is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.", "BUSY", Transient},
	{"CLUSTERDOWN The cluster is down", "CLUSTERDOWN", Transient},
	{"CLUSTERDOWN Hash slot not served", "CLUSTERDOWN", Transient},
	{"TRYAGAIN Multiple keys request during rehashing of slot", "TRYAGAIN", Transient},
	{"MOVED 3999 127.0.0.1:6381", "MOVED", Transient},
	{"ASK 3999 127.0.0.1:6381", "ASK", Transient},
	{"NOREPLICAS Not enough good replicas to write.", "NOREPLICAS", Transient},
	{"MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts.", "MISCONF", Transient},
	{"MISCONF Valkey is configured to save RDB snapshots, but it's currently unable to persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts.", "MISCONF", Transient},
	{"OOM command not allowed when used memory > 'maxmemory'.", "OOM", Transient},
	{"OOM command not allowed when used memory > 'maxmemory'. script: 6b1f2a, on @user_script:4.", "OOM", Transient},
	{"ERR max number of clients reached", "ERR", Transient},
	// NOSCRIPT: run again with EVAL.
	{"NOSCRIPT No matching script. Please use EVAL.", "NOSCRIPT", NoScript}, // Redis 7.0
	{"NOSCRIPT No matching script.", "NOSCRIPT", NoScript},                  // Valkey 8
	// ACL refusals of a command, a key, a channel: final.
	{"NOPERM this user has no permissions to run the 'evalsha' command", "NOPERM", Permission},
	{"NOPERM User u has no permissions to run the 'evalsha' command", "NOPERM", Permission},
	{"NOPERM this user has no permissions to access one of the keys used as arguments", "NOPERM", Permission},
	{"NOPERM No permissions to access a key", "NOPERM", Permission},
	{"NOPERM this user has no permissions to access one of the channels used as arguments", "NOPERM", Permission},
	{"NOPERM No permissions to access a channel", "NOPERM", Permission},
	// ... and inside a script, where the code is ERR.
	{"ERR The user executing the script can't run this command or subcommand script: 104ae6, on @user_script:1.", "ERR", Permission},
	{"ERR The user executing the script can't access at least one of the keys mentioned in the command arguments script: 40b36b, on @user_script:1.", "ERR", Permission},
	{"ERR ACL failure in script: User u has no permissions to run the 'time' command script: 104ae6, on @user_script:1.", "ERR", Permission},
	{"ERR ACL failure in script: No permissions to access a key script: 40b36b, on @user_script:1.", "ERR", Permission},
	// As a script's redis.pcall returns it (probe.lua's INFO error).
	{"ERR The user executing the script can't run this command or subcommand", "ERR", Permission},
	{"ERR ACL failure in script: User u has no permissions to run the 'info' command", "ERR", Permission},
	// Authentication: final.
	{"NOAUTH Authentication required.", "NOAUTH", Auth},
	{"WRONGPASS invalid username-password pair or user is disabled.", "WRONGPASS", Auth},
	// A key of another type: final.
	{"WRONGTYPE Operation against a key holding the wrong kind of value", "WRONGTYPE", WrongType},
	{"WRONGTYPE Operation against a key holding the wrong kind of value script: fd1f62, on @user_script:1.", "WRONGTYPE", WrongType},
	// Commands the server lacks: final.
	{"ERR unknown command 'EVALSHA', with args beginning with: ", "ERR", Unsupported},
	{"ERR unknown subcommand 'FROB'. Try CONFIG HELP.", "ERR", Unsupported},
	{"ERR Unknown Redis command called from script script: 5777ad, on @user_script:1.", "ERR", Unsupported},
	{"ERR Unknown command called from script script: 5777ad, on @user_script:1.", "ERR", Unsupported},
	{"CROSSSLOT Keys in request don't hash to the same slot", "CROSSSLOT", Unsupported},
	// redlease's scripts refusing, or failing: final.
	{"REDLEASE TTL 1000ms is above this node's MaxTTL 10ms", "REDLEASE", Script},
	{"REDLEASE fencing counter k:fence is not a number", "REDLEASE", Script},
	{"ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'", "ERR", Script},
	{"ERR user_script:1: boom script: 829034, on @user_script:1.", "ERR", Script},
	// Anything else: unknown, retryable.
	{"ERR test: node down", "ERR", Unknown},
	{"ERR no upstream host", "ERR", Unknown},
	{"NEWCODE something new", "NEWCODE", Unknown},
	{"ERR", "ERR", Unknown},
	{"", "", Unknown},
}

// TestClassFinal: which classes are final, as documented on each.
func TestClassFinal(t *testing.T) {
	final := map[Class]bool{
		Unknown: false, Transient: false, NoScript: false,
		Permission: true, Auth: true, WrongType: true, Unsupported: true, Script: true,
	}
	for c, want := range final {
		assert.Equal(t, want, c.Final(), "%v", c)
		if c != Unknown {
			assert.NotEqual(t, "unknown", c.String(), "class %d has its own name", int(c))
		}
	}
}

// TestClassifyLeavesOtherErrors: nil, a nil reply, network and context
// errors are not server replies.
func TestClassifyLeavesOtherErrors(t *testing.T) {
	for _, err := range []error{nil, redis.Nil, context.DeadlineExceeded, errors.New("dial tcp: connection refused"), errors.New("not awaited: the outcome was decided without this node")} {
		assert.Equal(t, err, Classify(err))
		_, ok := Of(err)
		assert.False(t, ok, "%v", err)
		assert.False(t, Final(err), "%v", err)
	}
}
