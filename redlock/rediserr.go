package redlock

import (
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// This file is the one place where redlock decides what a Redis error reply
// means. A reply is classified when it arrives, before any annotation is
// added, from its code: the first word of the reply (NOPERM, WRONGTYPE,
// READONLY, ...), which servers keep stable across versions while the
// wording after it changes (Redis 7.0 said "NOPERM this user has no
// permissions to access one of the keys used as arguments", Redis 7.2 and
// Valkey 8 say "NOPERM No permissions to access a key"). Everything else in
// the module asks the class (errors.As a *ReplyError, [IsFinal]), never the
// message.
//
// The one exception is the generic code ERR, which covers replies of
// opposite meanings: an unknown command (final) and a proxy's lost backend
// (worth a retry). Redis also reports a command or a key refused by an ACL
// inside a script with ERR, not NOPERM. For ERR alone, errTexts below lists
// the server messages that are known, by their documented wording in Redis
// 7.0, Redis 7.2+ and Valkey 8; rediserr_test.go checks each wording, and
// the integration test provokes each one on the real server under test.

// ErrorClass says what an error reply of a Redis server means to redlease:
// whether retrying the same request can succeed, and if not, why.
type ErrorClass int

// The classes of error replies. [ErrorClass.Final] tells the final ones.
const (
	// ClassUnknown: a code, or an ERR reply, that is none of the below,
	// such as the ERR a proxy in front of Redis returns for a lost
	// backend. Retryable: a wrong "final" would end an election's campaign
	// for good on a passing fault, while a wrong "retryable" costs at most
	// the caller's deadline.
	ClassUnknown ErrorClass = iota

	// ClassTransient: the server is in a passing state and says so.
	// Retryable. Codes: READONLY (a replica, e.g. a master demoted by a
	// failover), MASTERDOWN (a replica that lost its master), LOADING (a
	// restarted server loading its data), BUSY (another script is running
	// past busy-reply-threshold), CLUSTERDOWN and TRYAGAIN (a cluster
	// healing or migrating slots), MOVED and ASK (a slot changed owner; the
	// client reloads the cluster's state), NOREPLICAS (min-replicas-to-write
	// not met), MISCONF (writes stopped after a failed RDB save, until one
	// succeeds), OOM (maxmemory reached: with the noeviction policy redlease
	// needs, memory comes back as keys expire), and ERR "max number of
	// clients reached".
	ClassTransient

	// ClassNoScript: NOSCRIPT, the server does not have the script cached
	// (it restarted or was flushed). Retryable: redlock runs the script
	// again with EVAL at once, and every later request does the same.
	ClassNoScript

	// ClassPermission: an ACL refused a command, a key or a channel: NOPERM,
	// and the ERR replies of a refusal inside a script. Final until an
	// operator changes the user's rules.
	ClassPermission

	// ClassAuth: the connection is not authenticated (NOAUTH) or its
	// credentials are wrong (WRONGPASS). Final until the client's
	// credentials change.
	ClassAuth

	// ClassWrongType: WRONGTYPE, a key redlease uses holds another type of
	// value. Final until someone deletes that key.
	ClassWrongType

	// ClassUnsupported: the server lacks a command redlease needs: ERR
	// unknown command or unknown subcommand (EVALSHA on a server without
	// Lua, CONFIG renamed by a managed service), a command unknown to a
	// script, or CROSSSLOT (keys of one request in several hash slots,
	// which redlease never sends). Final: a retry sends the same command.
	ClassUnsupported

	// ClassScript: a redlease script refused the request (its own code
	// REDLEASE: a TTL above the node's MaxTTL, a fencing counter that is
	// not a number) or failed (ERR while compiling or running a script).
	// Final: a retry runs the same script on the same data.
	ClassScript
)

// Final reports whether a retry of the request meets the same reply.
func (c ErrorClass) Final() bool {
	switch c {
	case ClassPermission, ClassAuth, ClassWrongType, ClassUnsupported, ClassScript:
		return true
	}
	return false
}

func (c ErrorClass) String() string {
	switch c {
	case ClassTransient:
		return "transient"
	case ClassNoScript:
		return "no script"
	case ClassPermission:
		return "permission"
	case ClassAuth:
		return "authentication"
	case ClassWrongType:
		return "wrong type"
	case ClassUnsupported:
		return "unsupported"
	case ClassScript:
		return "script"
	default:
		return "unknown"
	}
}

// scriptCode is the code of the error replies of redlease's own scripts
// (redis.error_reply('REDLEASE ...') in lua/*.lua).
const scriptCode = "REDLEASE"

// codes maps the first word of an error reply to its class. Codes not
// listed are ClassUnknown; ERR is classified by errTexts.
var codes = map[string]ErrorClass{
	"READONLY":    ClassTransient,
	"MASTERDOWN":  ClassTransient,
	"LOADING":     ClassTransient,
	"BUSY":        ClassTransient,
	"CLUSTERDOWN": ClassTransient,
	"TRYAGAIN":    ClassTransient,
	"MOVED":       ClassTransient,
	"ASK":         ClassTransient,
	"NOREPLICAS":  ClassTransient,
	"MISCONF":     ClassTransient,
	"OOM":         ClassTransient,
	"NOSCRIPT":    ClassNoScript,
	"NOPERM":      ClassPermission,
	"NOAUTH":      ClassAuth,
	"WRONGPASS":   ClassAuth,
	"WRONGTYPE":   ClassWrongType,
	"CROSSSLOT":   ClassUnsupported,
	scriptCode:    ClassScript,
}

// errTexts classifies ERR replies by how the text after "ERR " begins
// (compared without regard to case). Each entry names the servers whose
// wording it matches; rediserr_test.go holds the full replies.
var errTexts = []struct {
	prefix string
	class  ErrorClass
}{
	// Redis 7.0, 7.2+, Valkey 8: "ERR unknown command 'X', with args
	// beginning with: ..." and "ERR unknown subcommand 'X'. Try CONFIG HELP."
	{"unknown command", ClassUnsupported},
	{"unknown subcommand", ClassUnsupported},
	// A command unknown to the server, called by a script: Redis 7.0
	// "Unknown Redis command called from script", Valkey 8 "Unknown
	// command called from script".
	{"unknown redis command called from script", ClassUnsupported},
	{"unknown command called from script", ClassUnsupported},
	// An ACL refusal inside a script, Redis 7.0: "The user executing the
	// script can't run this command or subcommand", "... can't access at
	// least one of the keys mentioned in the command arguments", "... can't
	// publish to the channel mentioned in the command".
	{"the user executing the script can't", ClassPermission},
	// The same, Redis 7.2+ and Valkey 8: "ACL failure in script: User u has
	// no permissions to run the 'time' command", "ACL failure in script: No
	// permissions to access a key".
	{"acl failure in script", ClassPermission},
	// A script that does not compile, or raises a Lua error: "Error
	// compiling script (new function): user_script:1: ...", and
	// "user_script:1: <message> script: <sha>, on @user_script:1."
	{"error compiling script", ClassScript},
	{"user_script:", ClassScript},
	// Redis 7.0, 7.2+, Valkey 8: maxclients reached; connections free up.
	{"max number of clients reached", ClassTransient},
}

// ReplyError is an error reply of a Redis server, classified by its code
// when it arrived. Per-node errors ([NodeResult.Err]) that a server sent
// have one in their chain: test with errors.As. Error returns the server's
// reply unchanged, and Unwrap the go-redis error. A ReplyError is never
// changed once made, so it is safe for concurrent use.
type ReplyError struct {
	// Code is the reply's first word: "NOPERM", "ERR", "REDLEASE", ...
	Code string
	// Class is what the reply means to redlease.
	Class ErrorClass
	err   error
}

func (e *ReplyError) Error() string { return e.err.Error() }

// Unwrap returns the go-redis error.
func (e *ReplyError) Unwrap() error { return e.err }

// classify returns err with its class attached when it is a server's error
// reply (a *ReplyError around it), and err as it is otherwise: nil, redis.Nil
// (a nil reply, not an error), network and context errors, or an error
// classified already.
func classify(err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return err
	}
	if _, ok := errors.AsType[*ReplyError](err); ok {
		return err
	}
	re, ok := errors.AsType[redis.Error](err)
	if !ok {
		return err
	}
	code, class := classifyReply(re.Error())
	return &ReplyError{Code: code, Class: class, err: err}
}

// classifyReply classifies the text of an error reply ("NOPERM ...", as
// go-redis reports it, or as a script's redis.pcall returns it).
func classifyReply(msg string) (code string, class ErrorClass) {
	msg = strings.TrimPrefix(msg, "-")
	code, rest, _ := strings.Cut(msg, " ")
	if code != "ERR" {
		return code, codes[code]
	}
	for _, t := range errTexts {
		if len(rest) >= len(t.prefix) && strings.EqualFold(rest[:len(t.prefix)], t.prefix) {
			return code, t.class
		}
	}
	return code, ClassUnknown
}

// scriptReplyClass classifies an error reply that a script caught with
// redis.pcall and returned as text.
func scriptReplyClass(msg string) ErrorClass {
	_, class := classifyReply(msg)
	return class
}

// noScripting turns a node's reply that it lacks Lua scripting (EVALSHA or
// EVAL unknown) into an error of New: such a server can never vote, and
// saying so at start-up beats a lock that is never granted.
func noScripting(n *node, err error) error {
	if c, ok := replyClass(err); !ok || c != ClassUnsupported {
		return err
	}
	return fmt.Errorf("%w: node %s cannot run redlease's Lua scripts (EVALSHA and EVAL are required): %w", ErrInvalidConfig, n.addr, err)
}

// replyClass returns the class of the server reply in err's chain, and
// false when err holds no server reply.
func replyClass(err error) (ErrorClass, bool) {
	if err == nil {
		return ClassUnknown, false
	}
	re, ok := errors.AsType[*ReplyError](classify(err))
	if !ok {
		return ClassUnknown, false
	}
	return re.Class, true
}

// finalReply reports a server reply that a retry meets again.
func finalReply(err error) bool {
	c, ok := replyClass(err)
	return ok && c.Final()
}

// accessDenied reports a refusal of our credentials or of an ACL
// permission: final, and an operator's to fix.
func accessDenied(err error) bool {
	c, ok := replyClass(err)
	return ok && (c == ClassAuth || c == ClassPermission)
}
