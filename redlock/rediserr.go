package redlock

import (
	"fmt"

	"github.com/redlease/redlease/internal/rediserr"
)

// Redis error replies are classified by internal/rediserr, where they
// arrive (classify); redlock asks their class, never their message.

// classify returns err with its class attached when it is a server's error
// reply (see rediserr.Classify).
func classify(err error) error { return rediserr.Classify(err) }

// replyClass returns the class of the server reply in err's chain, and
// false when err holds no server reply.
func replyClass(err error) (rediserr.Class, bool) { return rediserr.Of(err) }

// finalReply reports a server reply that a retry meets again.
func finalReply(err error) bool { return rediserr.Final(err) }

// accessDenied reports a refusal of our credentials or of an ACL
// permission: final, and an operator's to fix.
func accessDenied(err error) bool { return rediserr.Denied(err) }

// scriptReplyClass classifies an error reply that a script caught with
// redis.pcall and returned as text.
func scriptReplyClass(msg string) rediserr.Class {
	_, class := rediserr.ClassifyText(msg)
	return class
}

// noScripting turns a node's reply that it lacks Lua scripting (EVALSHA or
// EVAL unknown) into an error of New: such a server can never vote, and
// saying so at start-up beats a lock that is never granted.
func noScripting(n *node, err error) error {
	if c, ok := replyClass(err); !ok || c != rediserr.Unsupported {
		return err
	}
	return fmt.Errorf("%w: node %s cannot run redlease's Lua scripts (EVALSHA and EVAL are required): %w", ErrInvalidArgument, n.addr, err)
}
