// Package notice is the format of what a lease writes for others to read:
// the change notices published on its key's channel (this file) and the
// value stored in its keys (value.go). It has the one encoder and the one
// parser of each; packages lease, observer and election and the CLI use
// them, and nothing else spells a notice or a value.
//
// Notices are hints: they may be lost, late, duplicated or forged by
// anyone who can PUBLISH, so a receiver confirms what one says with a
// majority read or an attempt of its own (docs/design.md §4.12).
package notice

import "strings"

// suffix ends the name of a key's notice channel.
const suffix = ":notice"

// Channel returns the Pub/Sub channel of key's change notices. A lease
// publishes its acquisition there (from the lease, on every node), and
// redlock's release script publishes the release on each node where it
// deleted the key.
func Channel(key string) string { return key + suffix }

// KeyOf returns the key whose notice channel is channel, and false when
// channel is not a notice channel.
func KeyOf(channel string) (string, bool) { return strings.CutSuffix(channel, suffix) }

// Kind is what a notice says.
type Kind uint8

const (
	// Other is a payload of no kind this version knows (a forged notice,
	// or one of a later version): a receiver reads to find out.
	Other Kind = iota
	// Acquired: a holder acquired the key; Message.Value is its value.
	Acquired
	// Released: the key was deleted on the node that sent the notice.
	Released
)

// Message is one notice.
type Message struct {
	Kind Kind
	// Value is the new holder's lock value (Acquired only; see
	// DecodeValue).
	Value string
}

// The payloads: "acquired <value>" and "released".
const (
	acquiredWord = "acquired"
	releasedWord = "released"
)

// Encode returns the payload of m. A Message of kind Other encodes as its
// Value, as received.
func (m Message) Encode() string {
	switch m.Kind {
	case Acquired:
		return acquiredWord + " " + m.Value
	case Released:
		return releasedWord
	default:
		return m.Value
	}
}

// Parse reads a payload. It never fails: a payload it does not know is a
// Message of kind Other with the payload as its Value.
func Parse(payload string) Message {
	if payload == releasedWord {
		return Message{Kind: Released}
	}
	if v, ok := strings.CutPrefix(payload, acquiredWord+" "); ok {
		return Message{Kind: Acquired, Value: v}
	}
	return Message{Kind: Other, Value: payload}
}
