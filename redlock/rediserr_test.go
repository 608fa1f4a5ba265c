package redlock

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testnodes"
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
	for _, tc := range []struct {
		reply string // the server's reply, without the leading '-'
		code  string
		class ErrorClass
	}{
		// Transient states: retryable.
		{"READONLY You can't write against a read only replica.", "READONLY", ClassTransient},
		{"READONLY Can not run script with write flag on readonly replica", "READONLY", ClassTransient},
		{"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", "MASTERDOWN", ClassTransient},
		{"LOADING Redis is loading the dataset in memory", "LOADING", ClassTransient},
		{"LOADING Valkey is loading the dataset in memory", "LOADING", ClassTransient},
		{"BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.", "BUSY", ClassTransient},
		{"BUSY Valkey is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.", "BUSY", ClassTransient},
		{"CLUSTERDOWN The cluster is down", "CLUSTERDOWN", ClassTransient},
		{"CLUSTERDOWN Hash slot not served", "CLUSTERDOWN", ClassTransient},
		{"TRYAGAIN Multiple keys request during rehashing of slot", "TRYAGAIN", ClassTransient},
		{"MOVED 3999 127.0.0.1:6381", "MOVED", ClassTransient},
		{"ASK 3999 127.0.0.1:6381", "ASK", ClassTransient},
		{"NOREPLICAS Not enough good replicas to write.", "NOREPLICAS", ClassTransient},
		{"MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts.", "MISCONF", ClassTransient},
		{"MISCONF Valkey is configured to save RDB snapshots, but it's currently unable to persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts.", "MISCONF", ClassTransient},
		{"OOM command not allowed when used memory > 'maxmemory'.", "OOM", ClassTransient},
		{"OOM command not allowed when used memory > 'maxmemory'. script: 6b1f2a, on @user_script:4.", "OOM", ClassTransient},
		{"ERR max number of clients reached", "ERR", ClassTransient},
		// NOSCRIPT: run again with EVAL.
		{"NOSCRIPT No matching script. Please use EVAL.", "NOSCRIPT", ClassNoScript}, // Redis 7.0
		{"NOSCRIPT No matching script.", "NOSCRIPT", ClassNoScript},                  // Valkey 8
		// ACL refusals of a command, a key, a channel: final.
		{"NOPERM this user has no permissions to run the 'evalsha' command", "NOPERM", ClassPermission},
		{"NOPERM User u has no permissions to run the 'evalsha' command", "NOPERM", ClassPermission},
		{"NOPERM this user has no permissions to access one of the keys used as arguments", "NOPERM", ClassPermission},
		{"NOPERM No permissions to access a key", "NOPERM", ClassPermission},
		{"NOPERM this user has no permissions to access one of the channels used as arguments", "NOPERM", ClassPermission},
		{"NOPERM No permissions to access a channel", "NOPERM", ClassPermission},
		// ... and inside a script, where the code is ERR.
		{"ERR The user executing the script can't run this command or subcommand script: 104ae6, on @user_script:1.", "ERR", ClassPermission},
		{"ERR The user executing the script can't access at least one of the keys mentioned in the command arguments script: 40b36b, on @user_script:1.", "ERR", ClassPermission},
		{"ERR ACL failure in script: User u has no permissions to run the 'time' command script: 104ae6, on @user_script:1.", "ERR", ClassPermission},
		{"ERR ACL failure in script: No permissions to access a key script: 40b36b, on @user_script:1.", "ERR", ClassPermission},
		// As a script's redis.pcall returns it (probe.lua's INFO error).
		{"ERR The user executing the script can't run this command or subcommand", "ERR", ClassPermission},
		{"ERR ACL failure in script: User u has no permissions to run the 'info' command", "ERR", ClassPermission},
		// Authentication: final.
		{"NOAUTH Authentication required.", "NOAUTH", ClassAuth},
		{"WRONGPASS invalid username-password pair or user is disabled.", "WRONGPASS", ClassAuth},
		// A key of another type: final.
		{"WRONGTYPE Operation against a key holding the wrong kind of value", "WRONGTYPE", ClassWrongType},
		{"WRONGTYPE Operation against a key holding the wrong kind of value script: fd1f62, on @user_script:1.", "WRONGTYPE", ClassWrongType},
		// Commands the server lacks: final.
		{"ERR unknown command 'EVALSHA', with args beginning with: ", "ERR", ClassUnsupported},
		{"ERR unknown subcommand 'FROB'. Try CONFIG HELP.", "ERR", ClassUnsupported},
		{"ERR Unknown Redis command called from script script: 5777ad, on @user_script:1.", "ERR", ClassUnsupported},
		{"ERR Unknown command called from script script: 5777ad, on @user_script:1.", "ERR", ClassUnsupported},
		{"CROSSSLOT Keys in request don't hash to the same slot", "CROSSSLOT", ClassUnsupported},
		// redlease's scripts refusing, or failing: final.
		{"REDLEASE TTL 1000ms is above this node's MaxTTL 10ms", "REDLEASE", ClassScript},
		{"REDLEASE fencing counter k:fence is not a number", "REDLEASE", ClassScript},
		{"ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'", "ERR", ClassScript},
		{"ERR user_script:1: boom script: 829034, on @user_script:1.", "ERR", ClassScript},
		// Anything else: unknown, retryable.
		{"ERR test: node down", "ERR", ClassUnknown},
		{"ERR no upstream host", "ERR", ClassUnknown},
		{"NEWCODE something new", "NEWCODE", ClassUnknown},
		{"ERR", "ERR", ClassUnknown},
		{"", "", ClassUnknown},
	} {
		t.Run(tc.reply, func(t *testing.T) {
			wrapped := fmt.Errorf("acquire script on keys a, b: %w", replyErr(tc.reply))
			for _, err := range []error{replyErr(tc.reply), wrapped, classify(replyErr(tc.reply))} {
				got := classify(err)
				re, ok := errors.AsType[*ReplyError](got)
				require.True(t, ok, "%v: classified", err)
				assert.Equal(t, tc.code, re.Code)
				assert.Equal(t, tc.class, re.Class, "class %v, want %v", re.Class, tc.class)
				assert.Equal(t, err.Error(), got.Error(), "the message is kept as it is")
				assert.ErrorIs(t, got, err)
				assert.Equal(t, tc.class.Final(), finalReply(err))
			}
			assert.Equal(t, tc.class, scriptReplyClass(tc.reply))
		})
	}
}

// TestClassFinal: which classes are final, as documented on each.
func TestClassFinal(t *testing.T) {
	final := map[ErrorClass]bool{
		ClassUnknown: false, ClassTransient: false, ClassNoScript: false,
		ClassPermission: true, ClassAuth: true, ClassWrongType: true, ClassUnsupported: true, ClassScript: true,
	}
	for c, want := range final {
		assert.Equal(t, want, c.Final(), "%v", c)
		if c != ClassUnknown {
			assert.NotEqual(t, "unknown", c.String(), "class %d has its own name", int(c))
		}
	}
}

// TestClassifyLeavesOtherErrors: nil, a nil reply, network and context
// errors are not server replies.
func TestClassifyLeavesOtherErrors(t *testing.T) {
	for _, err := range []error{nil, redis.Nil, context.DeadlineExceeded, errors.New("dial tcp: connection refused"), ErrNotAwaited} {
		assert.Equal(t, err, classify(err))
		_, ok := replyClass(err)
		assert.False(t, ok, "%v", err)
		assert.False(t, finalReply(err), "%v", err)
	}
}

// TestNewRefusesServerWithoutLua: a node that does not know EVALSHA (a
// server without Lua scripting) is refused by New with an error naming it,
// rather than accepted as a node that never votes.
func TestNewRefusesServerWithoutLua(t *testing.T) {
	ctx := context.Background()
	_, good := testnodes.Minis(t, 2)
	addr := fakeServer(t, "-ERR unknown command 'evalsha', with args beginning with: \r\n")
	noLua := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { _ = noLua.Close() })
	_, err := New(ctx, Config{NodeTimeout: time.Second, Logger: testLogger(t)}, good[0], good[1], noLua)
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.ErrorContains(t, err, addr)
	assert.ErrorContains(t, err, "Lua")
}
