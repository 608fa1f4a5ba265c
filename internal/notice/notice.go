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

import (
	"strings"
	"time"
)

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
	// Message.Value is the key for a semaphore's permit (its channel is
	// the semaphore's, shared by every permit: package lease), "" for a
	// plain lease (the channel's own key).
	Released
	// Handover: the leader is about to release for the named successor
	// (Message.ID); the other candidates stand aside for Message.Window.
	Handover
	// Candidate: a candidate's registry record: Message.ID, Priority,
	// Since (when it began to campaign) and Window (how long the record
	// lasts unless refreshed).
	Candidate
	// Resign: a request to the leader whose lock value is Message.Value
	// to hand over to Message.ID.
	Resign
	// Roll: a roll call (redlease status): every candidate publishes its
	// record at once.
	Roll
)

// Message is one notice.
type Message struct {
	Kind Kind
	// Value is the new holder's lock value (Acquired; see DecodeValue),
	// or the leader's (Resign).
	Value string
	// ID is the successor (Handover, Resign) or the candidate
	// (Candidate); never empty in a parsed steering notice.
	ID string
	// Window is how long the other candidates stand aside (Handover), or
	// how long the record lasts (Candidate); whole milliseconds, above 0.
	Window time.Duration
	// Priority and Since: a candidate's (Candidate only).
	Priority int
	Since    time.Time
}

// The payloads: "acquired <value>", "released" and "released <key>".
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
		if m.Value != "" {
			return releasedWord + " " + m.Value
		}
		return releasedWord
	case Roll:
		return rollWord
	case Handover, Candidate, Resign:
		return encodeSteer(m.Kind, m)
	default:
		return m.Value
	}
}

// Parse reads a payload. It never fails: a payload it does not know is a
// Message of kind Other with the payload as its Value.
func Parse(payload string) Message {
	switch payload {
	case releasedWord:
		return Message{Kind: Released}
	case rollWord:
		return Message{Kind: Roll}
	}
	if v, ok := strings.CutPrefix(payload, acquiredWord+" "); ok {
		return Message{Kind: Acquired, Value: v}
	}
	if k, ok := strings.CutPrefix(payload, releasedWord+" "); ok && k != "" {
		return Message{Kind: Released, Value: k}
	}
	if m, ok := parseSteer(payload); ok {
		return m
	}
	return Message{Kind: Other, Value: payload}
}
