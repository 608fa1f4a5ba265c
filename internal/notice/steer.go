package notice

import (
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The notices that steer an election (package election, docs/design.md
// §6.4), published on the same channel as the change notices:
//
//	handover <window ms> <successor ID>                  a leader is about to release for a named successor
//	candidate <ttl ms> <priority> <since unix ms> <ID>   a candidate campaigns (a registry record)
//	resign <leader's value> <successor ID>               a request to the leader (redlease resign --to)
//	roll                                                 a roll call: candidates publish their records (redlease status)
//
// IDs are escaped with url.QueryEscape (no spaces). Like every notice they
// are hints, never trusted for safety: a handover only delays the other
// candidates' attempts, a record only orders them.
const (
	handoverWord  = "handover"
	candidateWord = "candidate"
	resignWord    = "resign"
	rollWord      = "roll" // a roll call: no fields
)

// steerFields is how many space-separated fields each steering word takes.
var steerFields = map[string]int{handoverWord: 2, candidateWord: 4, resignWord: 2}

// encodeSteer returns the payload of a steering message m of kind k.
func encodeSteer(k Kind, m Message) string {
	// Whole milliseconds, rounded up: a window is never sent as 0.
	ms := func(d time.Duration) string {
		return strconv.FormatInt(max(1, (d+time.Millisecond-1).Milliseconds()), 10)
	}
	switch k {
	case Handover:
		return handoverWord + " " + ms(m.Window) + " " + url.QueryEscape(m.ID)
	case Candidate:
		return candidateWord + " " + ms(m.Window) + " " + strconv.Itoa(m.Priority) + " " +
			strconv.FormatInt(m.Since.UnixMilli(), 10) + " " + url.QueryEscape(m.ID)
	default: // Resign
		return resignWord + " " + m.Value + " " + url.QueryEscape(m.ID)
	}
}

// parseSteer reads a steering payload; ok is false when payload is none.
func parseSteer(payload string) (m Message, ok bool) {
	word, rest, _ := strings.Cut(payload, " ")
	n, known := steerFields[word]
	f := strings.Split(rest, " ")
	if !known || len(f) != n {
		return Message{}, false
	}
	id, err := url.QueryUnescape(f[n-1])
	if err != nil || id == "" {
		return Message{}, false
	}
	m.ID = id
	switch word {
	case resignWord:
		m.Kind, m.Value = Resign, f[0]
		return m, m.Value != ""
	case handoverWord:
		m.Kind = Handover
	default:
		m.Kind = Candidate
	}
	w, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || w <= 0 {
		return Message{}, false
	}
	m.Window = time.Duration(w) * time.Millisecond
	if m.Kind == Candidate {
		p, err1 := strconv.Atoi(f[1])
		s, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return Message{}, false
		}
		m.Priority, m.Since = p, time.UnixMilli(s)
	}
	return m, true
}
