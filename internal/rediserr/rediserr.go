// Package rediserr is the one place where redlease decides what an error
// reply of a Redis server means: whether retrying the same request can
// succeed, and if not, why. Package redlock classifies every reply when it
// arrives; the public story is redlock.IsFinal and redlock.ErrAccessDenied.
package rediserr

import (
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// A reply is classified when redlock receives it, before any annotation
// is added, from its code: the first word of the reply (NOPERM, WRONGTYPE,
// READONLY, ...), which servers keep stable across versions while the
// wording after it changes (Redis 7.0 said "NOPERM this user has no
// permissions to access one of the keys used as arguments", Redis 7.2 and
// Valkey 8 say "NOPERM No permissions to access a key"). Everything else in
// the module asks the class (errors.As a *ReplyError, [Final],
// redlock.IsFinal), never the message.
//
// The one exception is the generic code ERR, which covers replies of
// opposite meanings: an unknown command (final) and a proxy's lost backend
// (worth a retry). Redis also reports a command or a key refused by an ACL
// inside a script with ERR, not NOPERM. For ERR alone, errTexts below lists
// the server messages that are known, by their documented wording in Redis
// 7.0, Redis 7.2+ and Valkey 8; rediserr_test.go checks each wording, and
// redlock's integration test provokes each one on the real server under test.

// Class says what an error reply of a Redis server means to redlease:
// whether retrying the same request can succeed, and if not, why.
type Class int

// The classes of error replies. [Class.Final] tells the final ones.
const (
	// Unknown: a code, or an ERR reply, that is none of the below,
	// such as the ERR a proxy in front of Redis returns for a lost
	// backend. Retryable: a wrong "final" would end an election's campaign
	// for good on a passing fault, while a wrong "retryable" costs at most
	// the caller's deadline.
	Unknown Class = iota

	// Transient: the server is in a passing state and says so.
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
	Transient

	// NoScript: NOSCRIPT, the server does not have the script cached
	// (it restarted or was flushed), or ERR "Function not found" (it does
	// not have the library). Retryable: redlock runs the script again with
	// EVAL, or loads the library and calls again, at once.
	NoScript

	// Permission: an ACL refused a command, a key or a channel: NOPERM,
	// and the ERR replies of a refusal inside a script. Final until an
	// operator changes the user's rules.
	Permission

	// Auth: the connection is not authenticated (NOAUTH) or its
	// credentials are wrong (WRONGPASS). Final until the client's
	// credentials change.
	Auth

	// WrongType: WRONGTYPE, a key redlease uses holds another type of
	// value. Final until someone deletes that key.
	WrongType

	// Unsupported: the server lacks a command redlease needs: ERR
	// unknown command or unknown subcommand (EVALSHA on a server without
	// Lua, CONFIG renamed by a managed service), a command unknown to a
	// script, or CROSSSLOT (keys of one request in several hash slots,
	// which redlease never sends). Final: a retry sends the same command.
	Unsupported

	// Script: a redlease script refused the request (its own code
	// REDLEASE: a TTL above the node's MaxTTL, a fencing counter that is
	// not a number) or failed (ERR while compiling or running a script).
	// Final: a retry runs the same script on the same data.
	Script
)

// Final reports whether a retry of the request meets the same reply.
func (c Class) Final() bool {
	switch c {
	case Permission, Auth, WrongType, Unsupported, Script:
		return true
	}
	return false
}

// String names the class for logs and test messages.
func (c Class) String() string {
	switch c {
	case Transient:
		return "transient"
	case NoScript:
		return "no script"
	case Permission:
		return "permission"
	case Auth:
		return "authentication"
	case WrongType:
		return "wrong type"
	case Unsupported:
		return "unsupported"
	case Script:
		return "script"
	default:
		return "unknown"
	}
}

// ScriptCode is the code of the error replies of redlease's own scripts
// (redis.error_reply('REDLEASE ...') in internal/scripts/lua/*.lua).
const ScriptCode = "REDLEASE"

// codes maps the first word of an error reply to its class. Codes not
// listed are Unknown; ERR is classified by errTexts.
var codes = map[string]Class{
	"READONLY":    Transient,
	"MASTERDOWN":  Transient,
	"LOADING":     Transient,
	"BUSY":        Transient,
	"CLUSTERDOWN": Transient,
	"TRYAGAIN":    Transient,
	"MOVED":       Transient,
	"ASK":         Transient,
	"NOREPLICAS":  Transient,
	"MISCONF":     Transient,
	"OOM":         Transient,
	"NOSCRIPT":    NoScript,
	"NOPERM":      Permission,
	"NOAUTH":      Auth,
	"WRONGPASS":   Auth,
	"WRONGTYPE":   WrongType,
	"CROSSSLOT":   Unsupported,
	ScriptCode:    Script,
}

// errTexts classifies ERR replies by how the text after "ERR " begins
// (compared without regard to case). Each entry names the servers whose
// wording it matches; rediserr_test.go holds the full replies.
var errTexts = []struct {
	prefix string
	class  Class
}{
	// Redis 7.0, 7.2+, Valkey 8: "ERR unknown command 'X', with args
	// beginning with: ..." and "ERR unknown subcommand 'X'. Try CONFIG HELP."
	{"unknown command", Unsupported},
	{"unknown subcommand", Unsupported},
	// A command unknown to the server, called by a script: Redis 7.0
	// "Unknown Redis command called from script", Valkey 8 "Unknown
	// command called from script".
	{"unknown redis command called from script", Unsupported},
	{"unknown command called from script", Unsupported},
	// An ACL refusal inside a script, Redis 7.0: "The user executing the
	// script can't run this command or subcommand", "... can't access at
	// least one of the keys mentioned in the command arguments", "... can't
	// publish to the channel mentioned in the command".
	{"the user executing the script can't", Permission},
	// The same, Redis 7.2+ and Valkey 8: "ACL failure in script: User u has
	// no permissions to run the 'time' command", "ACL failure in script: No
	// permissions to access a key".
	{"acl failure in script", Permission},
	// A script that does not compile, or raises a Lua error: "Error
	// compiling script (new function): user_script:1: ...", and
	// "user_script:1: <message> script: <sha>, on @user_script:1."
	{"error compiling script", Script},
	{"user_script:", Script},
	// The same in a Function library: "Error compiling function: ..." and
	// "user_function:1: <message> ...".
	{"error compiling function", Script},
	{"user_function:", Script},
	// FCALL of a function the server does not have (Redis 7.0+, Valkey
	// 8): "ERR Function not found". Like NOSCRIPT: redlock loads the
	// library and calls again.
	{"function not found", NoScript},
	// Redis 7.0, 7.2+, Valkey 8: maxclients reached; connections free up.
	{"max number of clients reached", Transient},
}

// ReplyError is an error reply of a Redis server, classified by its code
// when it arrived. Per-node errors (redlock.NodeResult.Err) that a server sent
// have one in their chain: test with errors.As. Error returns the server's
// reply unchanged, and Unwrap the go-redis error. A ReplyError is never
// changed once made, so it is safe for concurrent use.
type ReplyError struct {
	// Code is the reply's first word: "NOPERM", "ERR", "REDLEASE", ...
	Code string
	// Class is what the reply means to redlease.
	Class Class
	err   error
}

// Error returns the server's reply unchanged.
func (e *ReplyError) Error() string { return e.err.Error() }

// Unwrap returns the go-redis error.
func (e *ReplyError) Unwrap() error { return e.err }

// classify returns err with its class attached when it is a server's error
// reply (a *ReplyError around it), and err as it is otherwise: nil, redis.Nil
// (a nil reply, not an error), network and context errors, or an error
// classified already.
func Classify(err error) error {
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
	code, class := ClassifyText(re.Error())
	return &ReplyError{Code: code, Class: class, err: err}
}

// ClassifyText classifies the text of an error reply ("NOPERM ...", as
// go-redis reports it, or as a script's redis.pcall returns it).
func ClassifyText(msg string) (code string, class Class) {
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
	return code, Unknown
}

// Of returns the class of the server reply in err's chain, and false when
// err holds no server reply.
func Of(err error) (Class, bool) {
	if err == nil {
		return Unknown, false
	}
	re, ok := errors.AsType[*ReplyError](Classify(err))
	if !ok {
		return Unknown, false
	}
	return re.Class, true
}

// Final reports a server reply in err's chain that a retry meets again.
func Final(err error) bool {
	c, ok := Of(err)
	return ok && c.Final()
}

// Denied reports a refusal of our credentials or of an ACL permission in
// err's chain: final, and an operator's to fix.
func Denied(err error) bool {
	c, ok := Of(err)
	return ok && (c == Auth || c == Permission)
}
